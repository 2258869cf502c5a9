/**
 * The PostgreSQL payment store's schema (ARCHITECTURE.md §11 "Replicas"), created if missing. Names are
 * prefixed `arrow402_` so that the store can live in a database shared with other applications.
 */
import type { SQL } from "bun";

/**
 * Replicas starting together would race on CREATE TABLE IF NOT EXISTS (it is not atomic against a
 * concurrent creation of the same name): a transaction-scoped advisory lock serialises them.
 * The number is arbitrary but fixed: "arrow402" in ASCII.
 */
const SCHEMA_LOCK = 0x6172726f77343032n;

// uint256 amounts and validBefore: NUMERIC(78,0) holds 2^256-1 (78 digits) exactly.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS arrow402_payments (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  status TEXT NOT NULL CHECK (status IN ('settling', 'settled')),
  settled_at TIMESTAMPTZ NOT NULL,
  table_name TEXT NOT NULL,
  resource_url TEXT NOT NULL,
  query TEXT,
  rows BIGINT,
  amount NUMERIC(78, 0) NOT NULL,
  asset TEXT NOT NULL,
  network TEXT NOT NULL,
  payer TEXT NOT NULL,
  pay_to TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  payment_key TEXT NOT NULL UNIQUE,
  payment_id TEXT UNIQUE,
  valid_before NUMERIC(78, 0) NOT NULL,
  signed_payload TEXT NOT NULL
);
-- The answer a replay must match, and how often the payment was served again (DESIGN.md §17);
-- added to tables created by earlier versions.
ALTER TABLE arrow402_payments ADD COLUMN IF NOT EXISTS answer_digest TEXT;
ALTER TABLE arrow402_payments ADD COLUMN IF NOT EXISTS answer_format TEXT;
ALTER TABLE arrow402_payments ADD COLUMN IF NOT EXISTS replays INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS arrow402_payments_settled_at ON arrow402_payments (settled_at) WHERE status = 'settled';
CREATE INDEX IF NOT EXISTS arrow402_payments_settling ON arrow402_payments (settled_at) WHERE status = 'settling';
-- Claims only have to outlive the request holding them: UNLOGGED (no WAL, emptied after a server
-- crash, which also ends every request that held one).
CREATE UNLOGGED TABLE IF NOT EXISTS arrow402_claims (
  payment_key TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);
`;

export async function createSchema(sql: SQL): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK.toString()}::bigint)`;
    await tx.unsafe(SCHEMA);
  });
}
