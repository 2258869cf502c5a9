/**
 * The payment store's rows as stored (SQLite file or PostgreSQL database), read directly rather
 * than through our store API, for tests that check what a killed server left behind.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync } from "node:fs";

export interface StoredPayment {
  status: "settling" | "settled";
  payment_key: string;
  resource_url: string;
  query: string | null;
  amount: string;
  payer: string;
  tx_hash: string;
  rows: number | null;
}

export type LedgerLocation = { path: string } | { url: string };

const COLUMNS = "status, payment_key, resource_url, query, amount::text AS amount, payer, tx_hash, rows";

/** Every payment row, oldest first. */
export async function storedPayments(ledger: LedgerLocation): Promise<StoredPayment[]> {
  if ("path" in ledger) {
    if (!existsSync(ledger.path)) return [];
    const db = new Database(ledger.path, { readonly: true });
    try {
      return db.query<StoredPayment, []>(`SELECT ${COLUMNS.replace("amount::text AS amount", "amount")} FROM payments ORDER BY id`).all();
    } finally {
      db.close();
    }
  }
  const sql = new SQL({ url: ledger.url, max: 1 });
  try {
    const rows = (await sql.unsafe(`SELECT ${COLUMNS.replace("rows", "rows::int AS rows")} FROM arrow402_payments ORDER BY id`)) as StoredPayment[];
    return rows.map((row) => ({ ...row }));
  } finally {
    await sql.close();
  }
}

/**
 * When the claim on a payment expires (milliseconds since the epoch), or null when nobody holds it.
 * A killed server's claim stays until then.
 */
export async function claimExpiry(ledger: LedgerLocation, paymentKey: string): Promise<number | null> {
  if ("path" in ledger) {
    const db = new Database(ledger.path, { readonly: true });
    try {
      const row = db.query<{ expires_at: number }, [string]>("SELECT expires_at FROM claims WHERE payment_key = ?").get(paymentKey);
      return row?.expires_at ?? null;
    } finally {
      db.close();
    }
  }
  const sql = new SQL({ url: ledger.url, max: 1 });
  try {
    // By the database's clock, which is the one the claim expires by; converted to ours.
    const [row] = await sql`SELECT (extract(epoch FROM expires_at - now()) * 1000)::float8 AS remaining FROM arrow402_claims WHERE payment_key = ${paymentKey}`;
    return row === undefined ? null : Date.now() + Number(row.remaining);
  } finally {
    await sql.close();
  }
}

/** Waits until a claim on the payment, if any, has expired (bounded: throws after `limitMs`). */
export async function claimExpired(ledger: LedgerLocation, paymentKey: string, limitMs = 60_000): Promise<void> {
  const expiry = await claimExpiry(ledger, paymentKey);
  if (expiry === null) return;
  const wait = expiry - Date.now() + 250;
  if (wait > limitMs) throw new Error(`the claim on ${paymentKey} expires in ${wait} ms, more than the ${limitMs} ms allowed`);
  if (wait > 0) await Bun.sleep(wait);
}
