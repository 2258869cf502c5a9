/**
 * The SQLite payment store's schema, and the migration of ledger files written by earlier versions:
 * the oldest have no `status` (every row was settled), later ones no `payment_id` and no claims,
 * and until replays were held to the answer delivered, no `answer_digest`, `answer_format`, `replays`.
 * Rows are kept; columns are only ever added.
 */
import type { Database } from "bun:sqlite";

// Amounts and validBefore are uint256 on chain: stored as decimal text, summed as bigint.
// ISO-8601 UTC text for times: it sorts in time order, so `since` is a plain comparison.
const PAYMENTS = `
CREATE TABLE IF NOT EXISTS payments (
  id INTEGER PRIMARY KEY,
  settled_at TEXT NOT NULL,
  table_name TEXT NOT NULL,
  resource_url TEXT NOT NULL,
  query TEXT,
  rows INTEGER,
  amount TEXT NOT NULL,
  asset TEXT NOT NULL,
  network TEXT NOT NULL,
  payer TEXT NOT NULL,
  pay_to TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  payment_key TEXT NOT NULL UNIQUE,
  valid_before TEXT NOT NULL,
  signed_payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'settled' CHECK (status IN ('settling', 'settled')),
  payment_id TEXT
);
CREATE INDEX IF NOT EXISTS payments_settled_at ON payments (settled_at);
`;

// Claims are not payment records: they only have to outlive the request holding them (and a
// holder that died is replaced once `expires_at`, Unix milliseconds, has passed).
const CLAIMS = `
CREATE TABLE IF NOT EXISTS claims (
  payment_key TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`;

const STATUS_COLUMN = "ALTER TABLE payments ADD COLUMN status TEXT NOT NULL DEFAULT 'settled' CHECK (status IN ('settling', 'settled'))";
const PAYMENT_ID_COLUMN = "ALTER TABLE payments ADD COLUMN payment_id TEXT";
// SQLite cannot add a UNIQUE column; a unique index does the same (NULLs are distinct in it).
const PAYMENT_ID_INDEX = "CREATE UNIQUE INDEX IF NOT EXISTS payments_payment_id ON payments (payment_id)";
// The attempts in progress or unconfirmed are few among many settled rows.
// The answer a replay must match, and how often the payment was served again (DESIGN.md §17).
const ANSWER_COLUMNS = [
  ["answer_digest", "ALTER TABLE payments ADD COLUMN answer_digest TEXT"],
  ["answer_format", "ALTER TABLE payments ADD COLUMN answer_format TEXT"],
  ["replays", "ALTER TABLE payments ADD COLUMN replays INTEGER NOT NULL DEFAULT 0"],
] as const;
const SETTLING_INDEX = "CREATE INDEX IF NOT EXISTS payments_settling ON payments (settled_at) WHERE status = 'settling'";

/**
 * Creates or upgrades the schema in one IMMEDIATE transaction: two processes opening the same old
 * file at once cannot both add a column (the second sees the first one's result).
 */
export function migrate(db: Database): void {
  db.transaction(() => {
    db.run(PAYMENTS);
    const columns = new Set(db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('payments')").all().map((c) => c.name));
    // Ledgers written before settlement attempts were recorded hold settled payments only.
    if (!columns.has("status")) db.run(STATUS_COLUMN);
    if (!columns.has("payment_id")) db.run(PAYMENT_ID_COLUMN);
    for (const [name, add] of ANSWER_COLUMNS) if (!columns.has(name)) db.run(add);
    db.run(PAYMENT_ID_INDEX);
    db.run(SETTLING_INDEX);
    db.run(CLAIMS);
  }).immediate();
}
