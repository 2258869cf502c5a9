/**
 * The payment ledger (DESIGN.md §6): a durable record of every settled payment, written before the
 * paid response leaves. Its own writable SQLite file, never the data file (which is read-only).
 * WAL with synchronous=FULL: a committed row survives a crash or power loss, so a payment that
 * moved money is never forgotten, and a settled payment key is never settled twice (unique).
 *
 * A settlement is written in two steps around the facilitator call: `begin` commits the attempt
 * (status `settling`) before the money can move, `confirm` marks it settled with the transaction.
 * If the process dies, or the facilitator never answers, between the two, the row stays
 * `settling`: the payment may have moved money, and `arrow402 payments` lists it as unconfirmed
 * for the operator to reconcile on chain — it is never silently lost.
 *
 * `begin` is fully durable (it is what guarantees "never nothing"). `confirm` is committed before
 * the response too, but without waiting for the disk (see `confirm` below): the worst a power
 * loss can do to it is turn a settled row back into an unconfirmed one, which the report lists.
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

export interface LedgerEntry {
  /** When the facilitator confirmed settlement. */
  settledAt: Date;
  tableName: string;
  resourceUrl: string;
  /** The SQL for a query; null for metadata. */
  query: string | null;
  /** Rows delivered for a query; null for metadata. */
  rows: number | null;
  /** Smallest token units. */
  amount: bigint;
  asset: string;
  network: string;
  payer: string;
  payTo: string;
  transaction: string;
  /** network|asset|from|nonce, see wire.ts paymentKey. */
  paymentKey: string;
  /** EIP-3009 validBefore (Unix seconds); until then the same payment may recover its response. */
  validBefore: bigint;
  /** JSON of the signed `payload` (signature and authorization), to recognise the same payment. */
  signedPayload: string;
}

/** What is known before settling: everything but the facilitator's answer. */
export type SettlementAttempt = Omit<LedgerEntry, "transaction" | "payer" | "settledAt"> & { payer: string; attemptedAt: Date };

export interface LedgerTotal {
  tableName: string;
  network: string;
  asset: string;
  payments: number;
  amount: bigint;
}

export interface Ledger {
  readonly path: string;
  /** Commits a settled payment durably before returning; throws if the payment key is already settled. */
  record(entry: LedgerEntry): void;
  /**
   * Commits a settlement attempt (`settling`) durably, before the facilitator is asked to settle.
   * `resumed`: an earlier attempt of the same payment, whose outcome is unknown, was already
   * there (it is updated, and must not be abandoned: that earlier attempt may have moved money).
   */
  begin(attempt: SettlementAttempt): "new" | "resumed";
  /**
   * Marks an attempt settled with the facilitator's answer and the rows delivered. Committed
   * before returning, but not waited onto the disk (see the ledger's header).
   */
  confirm(paymentKey: string, settled: { transaction: string; payer: string; settledAt: Date; rows: number | null }): void;
  /** Forgets an attempt the facilitator refused: nothing was charged. */
  abandon(paymentKey: string): void;
  /** A settled payment by key (attempts in progress or unconfirmed are not settled). */
  findByKey(paymentKey: string): LedgerEntry | undefined;
  /** Settled payments, oldest first. */
  list(filter?: { since?: Date }): LedgerEntry[];
  /** Attempts whose outcome is unknown (the process stopped or the facilitator never answered). */
  unconfirmed(): LedgerEntry[];
  totals(filter?: { since?: Date }): LedgerTotal[];
  /** The connection's durability settings, as SQLite reports them (journal mode, synchronous level 2 = FULL). */
  durability(): { journalMode: string; synchronous: number };
  close(): void;
}

// Amounts and validBefore are uint256 on chain: stored as decimal text, summed as bigint.
const SCHEMA = `
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
  status TEXT NOT NULL DEFAULT 'settled' CHECK (status IN ('settling', 'settled'))
);
CREATE INDEX IF NOT EXISTS payments_settled_at ON payments (settled_at);
`;

interface Row {
  settled_at: string;
  table_name: string;
  resource_url: string;
  query: string | null;
  rows: number | null;
  amount: string;
  asset: string;
  network: string;
  payer: string;
  pay_to: string;
  tx_hash: string;
  payment_key: string;
  valid_before: string;
  signed_payload: string;
}

export function openLedger(path: string): Ledger {
  // The ledger is the process's own state: its folder (e.g. ./.arrow402/devnet/) is created on
  // first use, as SQLite creates the file but not the folders above it.
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, readwrite: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  db.run("PRAGMA busy_timeout = 5000");
  db.run(SCHEMA);
  // Ledgers written before settlement attempts were recorded hold settled payments only.
  const columns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('payments')").all();
  if (!columns.some((c) => c.name === "status")) {
    db.run("ALTER TABLE payments ADD COLUMN status TEXT NOT NULL DEFAULT 'settled' CHECK (status IN ('settling', 'settled'))");
  }

  const insert = db.prepare(
    `INSERT INTO payments (settled_at, table_name, resource_url, query, rows, amount, asset, network, payer, pay_to,
       tx_hash, payment_key, valid_before, signed_payload)
     VALUES ($settledAt, $tableName, $resourceUrl, $query, $rows, $amount, $asset, $network, $payer, $payTo,
       $transaction, $paymentKey, $validBefore, $signedPayload)`,
  );
  // A retried attempt (same key, outcome unknown) replaces the earlier one; a settled key never is.
  const attempt = db.prepare(
    `INSERT INTO payments (settled_at, table_name, resource_url, query, rows, amount, asset, network, payer, pay_to,
       tx_hash, payment_key, valid_before, signed_payload, status)
     VALUES ($attemptedAt, $tableName, $resourceUrl, $query, $rows, $amount, $asset, $network, $payer, $payTo,
       '', $paymentKey, $validBefore, $signedPayload, 'settling')
     ON CONFLICT (payment_key) DO UPDATE SET settled_at = excluded.settled_at, resource_url = excluded.resource_url,
       query = excluded.query, rows = excluded.rows, signed_payload = excluded.signed_payload
     WHERE status = 'settling'`,
  );
  const confirm = db.prepare(
    "UPDATE payments SET status = 'settled', tx_hash = ?1, payer = ?2, settled_at = ?3, rows = ?4 WHERE payment_key = ?5 AND status = 'settling'",
  );
  const statusOf = db.query<{ status: string }, [string]>("SELECT status FROM payments WHERE payment_key = ?");
  const syncNormal = db.prepare("PRAGMA synchronous = NORMAL");
  const syncFull = db.prepare("PRAGMA synchronous = FULL");
  const abandon = db.prepare("DELETE FROM payments WHERE payment_key = ? AND status = 'settling'");
  const byKey = db.query<Row, [string]>("SELECT * FROM payments WHERE payment_key = ? AND status = 'settled'");
  // ISO-8601 UTC text sorts in time order, so `since` is a plain comparison.
  const since = db.query<Row, [string]>("SELECT * FROM payments WHERE settled_at >= ? AND status = 'settled' ORDER BY settled_at, id");
  const pending = db.query<Row, []>("SELECT * FROM payments WHERE status = 'settling' ORDER BY settled_at, id");

  const list = (filter?: { since?: Date }) => since.all((filter?.since ?? new Date(0)).toISOString()).map(fromRow);

  return {
    path,
    record(entry) {
      insert.run({
        ...entry,
        settledAt: entry.settledAt.toISOString(),
        amount: entry.amount.toString(),
        validBefore: entry.validBefore.toString(),
      });
    },
    begin(entry) {
      const before = statusOf.get(entry.paymentKey)?.status;
      const changes = attempt.run({
        ...entry,
        attemptedAt: entry.attemptedAt.toISOString(),
        amount: entry.amount.toString(),
        validBefore: entry.validBefore.toString(),
      }).changes;
      if (changes !== 1) throw new Error(`payment ${entry.paymentKey} is already settled`);
      return before === "settling" ? "resumed" : "new";
    },
    confirm(paymentKey, settled) {
      // synchronous=NORMAL for this one commit: in WAL mode it is written to the WAL file (the OS
      // has it, so a crash of this process cannot lose it) without waiting for fsync, and WAL with
      // NORMAL never corrupts the file. Only a power loss before the next fsync (the next `begin`,
      // or a checkpoint) can undo it, and then the row is back to `settling`: the attempt that was
      // committed durably before the money moved, listed as unconfirmed by `arrow402 payments`.
      // The response waits for one fsync fewer; the ledger still never forgets a payment.
      syncNormal.run();
      try {
        const changes = confirm.run(settled.transaction, settled.payer, settled.settledAt.toISOString(), settled.rows, paymentKey).changes;
        if (changes !== 1) throw new Error(`no settlement attempt for payment ${paymentKey}`);
      } finally {
        syncFull.run();
      }
    },
    abandon(paymentKey) {
      abandon.run(paymentKey);
    },
    unconfirmed() {
      return pending.all().map(fromRow);
    },
    findByKey(paymentKey) {
      const row = byKey.get(paymentKey);
      return row === null ? undefined : fromRow(row);
    },
    list,
    totals(filter) {
      const totals = new Map<string, LedgerTotal>();
      for (const entry of list(filter)) {
        const key = [entry.tableName, entry.network, entry.asset.toLowerCase()].join("\u0000");
        const total = totals.get(key) ?? { tableName: entry.tableName, network: entry.network, asset: entry.asset, payments: 0, amount: 0n };
        total.payments += 1;
        total.amount += entry.amount;
        totals.set(key, total);
      }
      return [...totals.values()].sort((a, b) => a.tableName.localeCompare(b.tableName) || a.network.localeCompare(b.network));
    },
    durability() {
      const journal = db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get();
      const sync = db.query<{ synchronous: number }, []>("PRAGMA synchronous").get();
      return { journalMode: journal?.journal_mode ?? "unknown", synchronous: sync?.synchronous ?? -1 };
    },
    close() {
      db.close();
    },
  };
}

function fromRow(row: Row): LedgerEntry {
  return {
    settledAt: new Date(row.settled_at),
    tableName: row.table_name,
    resourceUrl: row.resource_url,
    query: row.query,
    rows: row.rows,
    amount: BigInt(row.amount),
    asset: row.asset,
    network: row.network,
    payer: row.payer,
    payTo: row.pay_to,
    transaction: row.tx_hash,
    paymentKey: row.payment_key,
    validBefore: BigInt(row.valid_before),
    signedPayload: row.signed_payload,
  };
}

export { formatPaymentsReport } from "./report.ts";
