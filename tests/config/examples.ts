/**
 * Config texts shared by the config tests: the full example of ARCHITECTURE.md §2 with real addresses.
 * One change: the fixed tag's description is quoted, because in a YAML flow mapping the comma of
 * `description: Any query, flat` ends the value and makes `flat` a key of its own.
 */

export const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
export const DEVNET_TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

export const FULL_EXAMPLE_YAML = `
server:
  bind: 127.0.0.1:4021
  base_url: http://localhost:4021
  cors_origins: ["*"]
facilitator:
  url: https://x402.org/facilitator
  timeout_ms: 10000
  headers: { Authorization: "Bearer \${FACILITATOR_TOKEN}" }
database:
  sqlite: ./data/market.sqlite
payment:
  max_timeout_seconds: 300
  default_description: Query execution payment
ledger:
  path: ./arrow402-ledger.sqlite
limits:
  max_rows: 1000000
  query_timeout_ms: 10000
  max_query_bytes: 16384
tokens:
  usdc/devnet: { chain: "31337", address: "${DEVNET_TOKEN.toLowerCase()}", name: "USD Coin", version: "2", decimals: 6 }
tables:
  - name: swaps
    description: DEX swaps
    columns: { amount_usd: "Swap size in US dollars" }
    price_tags:
      - { type: per_row, pay_to: "${PAY_TO}", token: usdc/base_sepolia, amount_per_item: "0.002", is_default: true }
      - { type: per_row, pay_to: "${PAY_TO}", token: usdc/base_sepolia, amount_per_item: "0.001", min_items: 100 }
      - { type: fixed, pay_to: "${PAY_TO}", token: usdc/base, amount: "1.00", description: "Any query, flat" }
      - { type: metadata_price, pay_to: "${PAY_TO}", token: usdc/base, amount: "0.01" }
  - name: blocks
dashboards:
  root: ./dashboards
  entries:
    - { slug: blocks, title: Blocks, description: Blocks per hour, tags: [Base], table: blocks }   # not swaps: it sells its schema
`;

/** The smallest valid config. */
export function minimal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { database: { sqlite: "db.sqlite" }, tables: [{ name: "items" }], ...overrides };
}

/** A valid per_row tag, for building variations. */
export function perRow(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.002", ...overrides };
}
