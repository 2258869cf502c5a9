/**
 * `bun run example:postgres`: the README's PostgreSQL example, runnable. Starts a throwaway
 * PostgreSQL server (Debian's `postgresql` package; data in a temporary folder, removed on exit),
 * loads the demo's swaps and tokens into schema `analytics` with PostgreSQL's own types, creates a
 * read-only role `reader`, writes `.arrow402/postgres-example/arrow402.yaml` and serves it until
 * Ctrl-C. The config is the one to copy: point its URL at your own server.
 *
 *   bun run example:postgres [--bind HOST:PORT] [--rows N]
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createDemoDatabase } from "../src/demo/database.ts";
import { DEMO_PAY_TO } from "../src/demo/config.ts";
import { startPostgres } from "../tests/support/postgres.ts";

const USAGE = "usage: bun run example:postgres [--bind HOST:PORT] [--rows N]";
const { values } = parseArgs({ args: Bun.argv.slice(2), options: { bind: { type: "string", default: "127.0.0.1:4022" }, rows: { type: "string", default: "250000" } } });
const rows = Number(values.rows);
if (!Number.isInteger(rows) || rows < 1) {
  console.error(`--rows must be a whole number of at least 1, got ${values.rows}\n${USAGE}`);
  process.exit(2);
}

const dir = resolve(".arrow402", "postgres-example");
mkdirSync(dir, { recursive: true });
const demoPath = join(dir, "demo.sqlite");
rmSync(demoPath, { force: true });
createDemoDatabase(demoPath, rows);

const server = await startPostgres();
const adminUrl = await server.createDatabase("market");
const admin = new SQL({ url: adminUrl, max: 1 });
const PASSWORD = "example-only";
await admin.unsafe(`
  CREATE SCHEMA analytics;
  CREATE TABLE analytics.tokens (
    symbol text PRIMARY KEY, name text NOT NULL, address text NOT NULL, decimals smallint NOT NULL,
    price_usd numeric(18,6), is_stable boolean NOT NULL, listed_on date NOT NULL);
  CREATE TABLE analytics.swaps_v2 (
    id bigint PRIMARY KEY, block_number bigint NOT NULL, block_time timestamptz NOT NULL,
    tx_hash text NOT NULL, pool text NOT NULL, trader text NOT NULL, token_in text NOT NULL,
    token_out text NOT NULL, amount_in double precision NOT NULL, amount_out double precision NOT NULL,
    amount_usd numeric(14,2) NOT NULL, fee_bps integer NOT NULL, gas_used integer, day date NOT NULL);
  CREATE INDEX ON analytics.swaps_v2 (block_time);
  CREATE INDEX ON analytics.swaps_v2 (pool);
  CREATE ROLE reader LOGIN PASSWORD '${PASSWORD}';
  GRANT USAGE ON SCHEMA analytics TO reader;
  GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO reader;
`);

// Rows go in as parameters, a few thousand per statement (PostgreSQL takes at most 65,535 parameters).
const demo = new Database(demoPath, { readonly: true });
async function copyTable(from: string, to: string, convert: (row: Record<string, unknown>) => Record<string, unknown> = (row) => row): Promise<void> {
  const all = demo.query(`SELECT * FROM ${from}`).all() as Record<string, unknown>[];
  for (let i = 0; i < all.length; i += 4000) {
    await admin`INSERT INTO ${admin(to)} ${admin(all.slice(i, i + 4000).map(convert))}`;
  }
}
await copyTable("tokens", "analytics.tokens", (row) => ({ ...row, is_stable: row.is_stable === 1 }));
await copyTable("swaps", "analytics.swaps_v2");
demo.close();
await admin.unsafe("ANALYZE");
await admin.close();

const port = new URL(adminUrl).port;
const configPath = join(dir, "arrow402.yaml");
await Bun.write(
  configPath,
  `# Written by scripts/postgres-example.ts: two tables of a PostgreSQL database, read by a read-only role.
server: { bind: "${values.bind}" }
ledger: { path: ledger.sqlite }
databases:
  warehouse:
    postgres: postgres://reader:\${PG_PASSWORD}@127.0.0.1:${port}/market   # \${VAR}: the password stays out of the file
    schema: analytics
tables:
  - name: swaps
    source: swaps_v2                # its name in PostgreSQL
    description: DEX swaps on Base, 30 days, served from PostgreSQL.
    price_tags:
      - { type: per_row, pay_to: "${DEMO_PAY_TO}", token: usdc/base_sepolia, amount_per_item: "0.0001", is_default: true }
  - name: tokens
    description: Tokens traded in the swaps table. Free.
`,
);
console.log(`PostgreSQL on 127.0.0.1:${port} (database market, schema analytics, role reader), ${rows} swaps`);
console.log(`config: ${configPath}`);

const serve = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "serve", "--config", configPath], {
  env: { ...process.env, PG_PASSWORD: PASSWORD },
  stdout: "inherit",
  stderr: "inherit",
});
const stop = () => serve.kill("SIGTERM");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
const code = await serve.exited;
await server.stop();
process.exit(code);
