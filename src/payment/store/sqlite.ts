/**
 * The payment store in a local SQLite file (`ledger.path`, the default; ARCHITECTURE.md §6): its own
 * writable file, never the data file (which is read-only). WAL with synchronous=FULL: a committed
 * attempt survives a crash or a power loss, so a payment that may have moved money is never
 * forgotten, and a payment key or payment id is recorded once (unique).
 *
 * Several processes may share one file: claims are rows of the file with a short lease that each
 * process renews while it holds them (leases.ts), so they exclude each other there too, a process
 * that dies frees its payments within the lease, and SQLite serialises the writes (busy_timeout
 * waits for the lock). Leases are by Date.now(): the processes sharing a file share a clock.
 *
 * bun:sqlite is synchronous; the store's methods are asynchronous only to share one contract with
 * the PostgreSQL store (store.ts).
 */
import { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Claim, PaymentRecord, PaymentStore, Settlement, SettlementAttempt } from "../store.ts";
import { createLeases } from "./leases.ts";
import { alreadyRecorded, noAttemptInProgress } from "./refusals.ts";
import { migrate } from "./sqlite-schema.ts";
import { sumTotals } from "./totals.ts";

export interface SqlitePaymentStore extends PaymentStore {
  /** The connection's durability settings as SQLite reports them (journal mode; synchronous 2 = FULL). */
  durability(): { journalMode: string; synchronous: number };
}

interface Row {
  status: "settling" | "settled";
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
  payment_id: string | null;
  valid_before: string;
  signed_payload: string;
  answer_digest: string | null;
  answer_format: string | null;
  replays: number;
}

const COLUMNS = `status, settled_at, table_name, resource_url, query, rows, amount, asset, network, payer, pay_to, tx_hash,
  payment_key, payment_id, valid_before, signed_payload, answer_digest, answer_format, replays`;

export interface SqliteStoreOptions {
  /** How long a claim lives without renewal (default CLAIM_LEASE_MS); shorter in tests. */
  claimLeaseMs?: number;
}

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqlitePaymentStore {
  // The ledger is the process's own state: its folder (e.g. ./.arrow402/devnet/) is created on
  // first use, as SQLite creates the file but not the folders above it.
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, readwrite: true, strict: true });
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  migrate(db);

  const syncNormal = db.prepare("PRAGMA synchronous = NORMAL");
  const syncFull = db.prepare("PRAGMA synchronous = FULL");
  /** One commit that need not wait for the disk (see `confirm`); every other write does. */
  const withoutFsync = <T>(write: () => T): T => {
    syncNormal.run();
    try {
      return write();
    } finally {
      syncFull.run();
    }
  };

  // A claim is taken when there is none, or when its holder's expired: one statement, so two
  // processes (SQLite serialises writers) can never both take it.
  const takeClaim = db.prepare(
    `INSERT INTO claims (payment_key, holder, expires_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (payment_key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
     WHERE claims.expires_at <= ?4`,
  );
  const dropClaim = db.prepare("DELETE FROM claims WHERE payment_key = ? AND holder = ?");
  // Every claim this handle holds, in one statement (by its key, then its holder: unique).
  const renewClaims = db.prepare<{ holder: string }, [number, string, string]>(
    `UPDATE claims SET expires_at = ?1
     WHERE payment_key IN (SELECT value FROM json_each(?2)) AND holder IN (SELECT value FROM json_each(?3))
     RETURNING holder`,
  );
  // Strict: an attempt never overwrites a record (DO NOTHING on either unique key, then refused).
  const insertAttempt = db.prepare(
    `INSERT INTO payments (status, settled_at, table_name, resource_url, query, rows, amount, asset, network, payer, pay_to,
       tx_hash, payment_key, payment_id, valid_before, signed_payload)
     VALUES ('settling', $attemptedAt, $tableName, $resourceUrl, $query, $rows, $amount, $asset, $network, $payer, $payTo,
       '', $paymentKey, $paymentId, $validBefore, $signedPayload)
     ON CONFLICT DO NOTHING`,
  );
  const confirmAttempt = db.prepare(
    `UPDATE payments SET status = 'settled', tx_hash = ?1, payer = ?2, settled_at = ?3, rows = ?4, answer_digest = ?5, answer_format = ?6
     WHERE payment_key = ?7 AND status = 'settling'`,
  );
  const setAnswer = db.prepare(
    "UPDATE payments SET answer_digest = ?1, answer_format = ?2, rows = ?3 WHERE payment_key = ?4 AND status = 'settled' AND answer_digest IS NULL",
  );
  const addReplay = db.prepare("UPDATE payments SET replays = replays + 1 WHERE payment_key = ?1 AND status = 'settled' AND replays < ?2");
  // Only while the holder still holds the payment's claim (SQLite serialises writers: no takeover
  // can come between the check and the delete).
  const deleteAttempt = db.prepare(
    `DELETE FROM payments WHERE payment_key = ?1 AND status = 'settling'
       AND EXISTS (SELECT 1 FROM claims WHERE payment_key = ?1 AND holder = ?2)`,
  );
  const byKey = db.query<Row, [string]>(`SELECT ${COLUMNS} FROM payments WHERE payment_key = ?`);
  const byPaymentId = db.query<Row, [string]>(`SELECT ${COLUMNS} FROM payments WHERE payment_id = ?`);
  const settledSince = db.query<Row, [string]>(
    `SELECT ${COLUMNS} FROM payments WHERE settled_at >= ? AND status = 'settled' ORDER BY settled_at, id`,
  );
  const settling = db.query<Row, []>(`SELECT ${COLUMNS} FROM payments WHERE status = 'settling' ORDER BY settled_at, id`);
  const totalsSince = db.query<Pick<Row, "table_name" | "network" | "asset" | "amount">, [string]>(
    "SELECT table_name, network, asset, amount FROM payments WHERE settled_at >= ? AND status = 'settled'",
  );

  // Claims left by processes that died are of no use to anyone once expired.
  withoutFsync(() => db.run("DELETE FROM claims WHERE expires_at <= ?", [Date.now()]));

  const sinceText = (filter?: { since?: Date }) => (filter?.since ?? new Date(0)).toISOString();
  let closed = false;
  // Claims need not survive a crash (the requests holding them do not either): renewals, like
  // takes and releases, commit without an fsync, so one costs the HTTP thread a WAL append.
  const leases = createLeases((claims, leaseMs) => {
    if (closed) return [];
    const keys = JSON.stringify(claims.map((claim) => claim.paymentKey));
    const holders = JSON.stringify(claims.map((claim) => claim.holder));
    return withoutFsync(() => renewClaims.all(Date.now() + leaseMs, keys, holders)).map((row) => row.holder);
  }, options.claimLeaseMs);

  return {
    location: path,
    async claim(paymentKey) {
      const holder = randomUUID();
      const now = Date.now();
      const taken = withoutFsync(() => takeClaim.run(paymentKey, holder, now + leases.leaseMs, now).changes) === 1;
      if (!taken) return null;
      return leases.hold({ paymentKey, holder }, () => {
        if (closed) return;
        // Only our own claim: after its lease ran out another request may hold the key.
        withoutFsync(() => dropClaim.run(paymentKey, holder));
      });
    },
    async find(paymentKey) {
      return recordOrUndefined(byKey.get(paymentKey));
    },
    async findByPaymentId(paymentId) {
      return recordOrUndefined(byPaymentId.get(paymentId));
    },
    async begin(attempt: SettlementAttempt) {
      const changes = insertAttempt.run({
        attemptedAt: attempt.attemptedAt.toISOString(),
        tableName: attempt.tableName,
        resourceUrl: attempt.resourceUrl,
        query: attempt.query,
        rows: attempt.rows,
        amount: attempt.amount.toString(),
        asset: attempt.asset,
        network: attempt.network,
        payer: attempt.payer,
        payTo: attempt.payTo,
        paymentKey: attempt.paymentKey,
        paymentId: attempt.paymentId,
        validBefore: attempt.validBefore.toString(),
        signedPayload: attempt.signedPayload,
      }).changes;
      if (changes !== 1) throw alreadyRecorded(attempt);
    },
    async confirm(paymentKey: string, settlement: Settlement) {
      // synchronous=NORMAL for this one commit: in WAL mode it is written to the WAL file (the OS
      // has it, so a crash of this process cannot lose it) without waiting for fsync, and WAL with
      // NORMAL never corrupts the file. Only a power loss before the next fsync (the next `begin`,
      // or a checkpoint) can undo it, and then the row is back to `settling`: the attempt that was
      // committed durably before the money moved, listed as unconfirmed by `arrow402 payments`.
      const { transaction, payer, settledAt, rows, answer } = settlement;
      const changes = withoutFsync(
        () => confirmAttempt.run(transaction, payer, settledAt.toISOString(), rows, answer?.digest ?? null, answer?.format ?? null, paymentKey).changes,
      );
      if (changes !== 1) throw noAttemptInProgress(paymentKey);
    },
    async recordAnswer(paymentKey, answer, rows) {
      withoutFsync(() => setAnswer.run(answer.digest, answer.format, rows, paymentKey));
    },
    async countReplay(paymentKey, max) {
      // A count lost to a power loss only allows one more replay: no fsync on the HTTP thread.
      return withoutFsync(() => addReplay.run(paymentKey, max).changes) === 1;
    },
    async abandon(paymentKey, claim: Claim) {
      return deleteAttempt.run(paymentKey, claim.holder).changes === 1;
    },
    async list(filter) {
      return settledSince.all(sinceText(filter)).map(toRecord);
    },
    async unconfirmed() {
      return settling.all().map(toRecord);
    },
    async totals(filter) {
      return sumTotals(totalsSince.all(sinceText(filter)).map((row) => ({
        tableName: row.table_name,
        network: row.network,
        asset: row.asset,
        amount: BigInt(row.amount),
      })));
    },
    async ping() {
      db.query("SELECT 1").get();
    },
    async close() {
      if (closed) return;
      closed = true;
      leases.stop();
      db.close();
    },
    durability() {
      const journal = db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get();
      const sync = db.query<{ synchronous: number }, []>("PRAGMA synchronous").get();
      return { journalMode: journal?.journal_mode ?? "unknown", synchronous: sync?.synchronous ?? -1 };
    },
  };
}

function recordOrUndefined(row: Row | null): PaymentRecord | undefined {
  return row === null ? undefined : toRecord(row);
}

function toRecord(row: Row): PaymentRecord {
  return {
    status: row.status,
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
    paymentId: row.payment_id,
    validBefore: BigInt(row.valid_before),
    signedPayload: row.signed_payload,
    answer: row.answer_digest === null || row.answer_format === null ? null : { digest: row.answer_digest, format: row.answer_format },
    replays: row.replays,
  };
}
