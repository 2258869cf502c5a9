/**
 * The demo's configuration, used by `arrow402 serve` when neither --config nor ./arrow402.yaml
 * exists. The paid table is priced in Base Sepolia USDC (a testnet) through the public x402
 * facilitator; the 402 needs no network, since no facilitator call happens before a payment.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { createDemoDatabase } from "./database.ts";

/** Demo recipient on Base Sepolia. Sellers put their own wallet in `pay_to`. */
export const DEMO_PAY_TO = "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF";

export function demoDirectory(cwd = process.cwd()): string {
  return resolve(cwd, ".arrow402", "demo");
}

export function demoRawConfig(dir: string) {
  return {
    server: { bind: "127.0.0.1:4021" },
    database: { sqlite: join(dir, "demo.sqlite") },
    ledger: { path: join(dir, "ledger.sqlite") },
    tables: [
      {
        name: "swaps",
        description: "DEX swaps on Base, 30 days: pool, trader, amounts in and out, size in USD.",
        columns: {
          block_time: "Block timestamp (UTC)",
          amount_usd: "Trade size in US dollars",
          fee_bps: "Pool fee in basis points",
        },
        price_tags: [
          { type: "per_row", pay_to: DEMO_PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.0001", is_default: true },
          { type: "per_row", pay_to: DEMO_PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.00005", min_items: 10000, description: "Bulk rate from 10,000 rows" },
        ],
      },
      { name: "tokens", description: "Tokens traded in the swaps table, with reference prices. Free." },
    ],
    dashboards: {
      root: join(dir, "dashboards"),
      entries: [
        { slug: "dex", title: "DEX activity on Base", description: "Swap volume over time, trade sizes and the busiest pools.", tags: ["DeFi", "Base", "demo"], table: "swaps" },
        { slug: "tokens", title: "Token list", description: "The tokens in the demo and their reference prices.", tags: ["reference", "free"], table: "tokens" },
      ],
    },
  };
}

/** Creates the demo database on first run and returns the demo configuration. */
export function prepareDemo(dir = demoDirectory(), env: Record<string, string | undefined> = process.env): Config {
  const dbPath = join(dir, "demo.sqlite");
  if (!existsSync(dbPath)) createDemoDatabase(dbPath);
  return resolveConfig(demoRawConfig(dir), { baseDir: dir, env });
}
