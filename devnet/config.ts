/**
 * The arrow402 configuration that points at a running sandbox (ARCHITECTURE.md §2): the demo database,
 * priced in the sandbox token, paid through the sandbox facilitator. Written by hand rather than
 * by a YAML serialiser so that it can carry comments a reader can act on.
 */
import type { Hex } from "viem";
import type { DevnetTokenConfig } from "./index.ts";

export interface DevnetConfigInput {
  facilitatorUrl: string;
  /** The sandbox chain's JSON-RPC endpoint (rpc_urls: settlements whose answer was lost are checked there). */
  rpcUrl?: string;
  token: DevnetTokenConfig;
  payTo: Hex;
  /** As written in the YAML; relative paths are relative to the config file's folder. */
  databasePath?: string;
  ledgerPath?: string;
  /** host:port for arrow402 itself. */
  bind?: string;
}

export const DEMO_DATABASE_PATH = "./.arrow402/demo/demo.sqlite";
export const DEVNET_LEDGER_PATH = "./.arrow402/devnet/ledger.sqlite";

/** YAML double-quoted scalars accept JSON string syntax. */
const quoted = (value: string) => JSON.stringify(value);

export function devnetConfigYaml(input: DevnetConfigInput): string {
  const bind = input.bind ?? "127.0.0.1:4021";
  const port = bind.slice(bind.lastIndexOf(":") + 1);
  const { token } = input;
  const payTo = quoted(input.payTo);
  return `# arrow402 config for the local paid sandbox (bun run devnet).
# Payments settle on the sandbox chain (eip155:31337) through the sandbox facilitator.
# The database is the demo's (bun run devnet creates it when it is missing).
server:
  bind: ${bind}
  base_url: http://localhost:${port}
facilitator:
  url: ${quoted(input.facilitatorUrl)}
  timeout_ms: 10000
database:
  sqlite: ${quoted(input.databasePath ?? DEMO_DATABASE_PATH)}
ledger:
  path: ${quoted(input.ledgerPath ?? DEVNET_LEDGER_PATH)}
${input.rpcUrl === undefined ? "" : `rpc_urls:\n  "31337": ${quoted(input.rpcUrl)}\n`}tokens:
  ${token.key}:
    chain: ${quoted(token.chain)}
    address: ${quoted(token.address)}
    name: ${quoted(token.name)}
    version: ${quoted(token.version)}
    decimals: ${token.decimals}
    symbol: tUSDC
    network_label: arrow402 devnet
tables:
  - name: swaps
    description: DEX swaps, paid per row in sandbox test USDC.
    price_tags:
      - { type: per_row, pay_to: ${payTo}, token: ${token.key}, amount_per_item: "0.0001", is_default: true }
      - { type: per_row, pay_to: ${payTo}, token: ${token.key}, amount_per_item: "0.00005", min_items: 10000, description: "Bulk rate from 10,000 rows" }
  - name: tokens
    description: Tokens traded in the swaps table, with reference prices. Free.
`;
}
