/**
 * The payment store in PostgreSQL (`ledger.url`; ARCHITECTURE.md §11 "Replicas"), through Bun's built-in
 * SQL client: every replica sharing the database shares the claims, the attempts and the ledger,
 * so N replicas act as one server. Same contract as the SQLite store (store.ts); one contract test
 * runs against both.
 *
 * Claims are rows of an UNLOGGED table with a short lease, taken by one atomic
 * INSERT … ON CONFLICT DO UPDATE … WHERE expired, and renewed by their replica while it works
 * (leases.ts: one UPDATE every third of the lease for all the claims the replica holds). A row
 * works through any pooled connection, expires by the database's clock (the same clock for every
 * replica, whatever theirs say), and costs one round trip without a disk flush.
 * Not session advisory locks, although a lock that ends with its session also frees a dead
 * replica's payments: a lock belongs to one connection, so either each in-flight payment pins a
 * pooled connection until its release (the pool then caps the payments in flight), or one reserved
 * connection holds them all, serialising every claim and release of the replica and losing them
 * all, unnoticed by their holders, when that connection drops. A lease is also what the SQLite
 * store does (it has no such lock): one mechanism, one contract test.
 *
 * Connection failures reject the call with LedgerUnavailableError: the payment core refuses the
 * payment before any facilitator call (503 with Retry-After, nothing charged), or, after a
 * settlement, answers 500 saying the money moved. The pool connects again on the next call once
 * the server is back: replicas need no restart.
 */
import { SQL } from "bun";
import { randomUUID } from "node:crypto";
import { withDeadline } from "../../deadline.ts";
import { LedgerUnavailableError } from "../../errors.ts";
import type { Claim, DeliveredAnswer, PaymentRecord, PaymentStore, PaymentTotal, Settlement, SettlementAttempt } from "../store.ts";
import { createLeases, type HeldClaim } from "./leases.ts";
import { createSchema } from "./postgres-schema.ts";
import { postgresConnection, postgresLocation } from "./postgres-url.ts";
import { alreadyRecorded, noAttemptInProgress } from "./refusals.ts";
import { sortTotals } from "./totals.ts";

export interface PostgresStoreOptions {
  /** Largest number of connections in the pool (default 10). */
  maxConnections?: number;
  /** Seconds to wait for a connection (default 10). */
  connectionTimeoutSeconds?: number;
  /**
   * Longest one call may wait for the server (default 10 s) before the ledger counts as unreachable:
   * a server that stops answering without closing its connections (frozen, or behind a network
   * partition) would otherwise hold every paid request forever.
   */
  callTimeoutMs?: number;
  /** How long a claim lives without renewal (default CLAIM_LEASE_MS); shorter in tests. */
  claimLeaseMs?: number;
}

interface Row {
  status: "settling" | "settled";
  settled_at: Date;
  table_name: string;
  resource_url: string;
  query: string | null;
  rows: string | null;
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

/** Opens the pool and creates the schema if missing; rejects, naming the location, when the database cannot be used. */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PaymentStore> {
  const location = postgresLocation(url);
  const sql = new SQL({
    ...postgresConnection(url),
    max: options.maxConnections ?? 10,
    connectionTimeout: options.connectionTimeoutSeconds ?? 10,
  });
  try {
    await createSchema(sql);
    // Claims left by replicas that died are of no use to anyone once expired.
    await sql`DELETE FROM arrow402_claims WHERE expires_at <= now()`;
  } catch (error) {
    await sql.close().catch(() => {});
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open the payment ledger at ${location}: ${reason}; check ledger.url and that the PostgreSQL server is running and reachable`);
  }

  // Amounts and validBefore are read as text (exact uint256), rows as text (int8).
  const select = () => sql`SELECT status, settled_at, table_name, resource_url, query, rows::text AS rows, amount::text AS amount,
      asset, network, payer, pay_to, tx_hash, payment_key, payment_id, valid_before::text AS valid_before, signed_payload,
      answer_digest, answer_format, replays
    FROM arrow402_payments`;
  const since = (filter?: { since?: Date }) => filter?.since ?? new Date(0);
  const reachable = reachableWithin(options.callTimeoutMs ?? 10_000);
  let closed = false;
  const takeClaim = reachable(async (paymentKey: string, holder: string) => {
    const taken = await sql`
      INSERT INTO arrow402_claims (payment_key, holder, expires_at)
      VALUES (${paymentKey}, ${holder}, now() + ${leases.leaseMs}::float8 * interval '1 millisecond')
      ON CONFLICT (payment_key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
        WHERE arrow402_claims.expires_at <= now()
      RETURNING holder`;
    return taken.length === 1;
  });
  const leases = createLeases(
    reachable(async (claims: readonly HeldClaim[], leaseMs: number) => {
      if (closed) return [];
      const keys = JSON.stringify(claims.map((claim) => claim.paymentKey));
      const holders = JSON.stringify(claims.map((claim) => claim.holder));
      // The lists travel as JSON text (a parameter typed jsonb would be encoded as one JSON string).
      const renewed = (await sql`
        UPDATE arrow402_claims SET expires_at = now() + ${leaseMs}::float8 * interval '1 millisecond'
        WHERE payment_key IN (SELECT jsonb_array_elements_text(${keys}::text::jsonb))
          AND holder IN (SELECT jsonb_array_elements_text(${holders}::text::jsonb))
        RETURNING holder`) as { holder: string }[];
      return renewed.map((row) => row.holder);
    }),
    options.claimLeaseMs,
  );

  return {
    location,
    async claim(paymentKey: string) {
      const holder = randomUUID();
      // Renewed only once taken in time: a take given up on (no answer within callTimeoutMs) that
      // lands later is never renewed, and expires within the lease.
      if (!(await takeClaim(paymentKey, holder))) return null;
      // Only our own claim: after its lease ran out another request may hold the key. A release
      // that fails leaves the row to expire within the lease (it is no longer renewed).
      return leases.hold(
        { paymentKey, holder },
        reachable(async () => {
          await sql`DELETE FROM arrow402_claims WHERE payment_key = ${paymentKey} AND holder = ${holder}`;
        }),
      );
    },
    find: reachable(async (paymentKey: string) => {
      const [row] = (await sql`${select()} WHERE payment_key = ${paymentKey}`) as Row[];
      return row === undefined ? undefined : toRecord(row);
    }),
    findByPaymentId: reachable(async (paymentId: string) => {
      const [row] = (await sql`${select()} WHERE payment_id = ${paymentId}`) as Row[];
      return row === undefined ? undefined : toRecord(row);
    }),
    begin: reachable(async (attempt: SettlementAttempt) => {
      // Strict: DO NOTHING on either unique key (payment_key, payment_id), then refused.
      const inserted = await sql`
        INSERT INTO arrow402_payments (status, settled_at, table_name, resource_url, query, rows, amount, asset, network,
          payer, pay_to, tx_hash, payment_key, payment_id, valid_before, signed_payload)
        VALUES ('settling', ${attempt.attemptedAt}, ${attempt.tableName}, ${attempt.resourceUrl}, ${attempt.query},
          ${attempt.rows}, ${attempt.amount.toString()}::numeric, ${attempt.asset}, ${attempt.network}, ${attempt.payer},
          ${attempt.payTo}, '', ${attempt.paymentKey}, ${attempt.paymentId}, ${attempt.validBefore.toString()}::numeric,
          ${attempt.signedPayload})
        ON CONFLICT DO NOTHING
        RETURNING id`;
      if (inserted.length !== 1) throw alreadyRecorded(attempt);
    }),
    confirm: reachable(async (paymentKey: string, settlement: Settlement) => {
      // synchronous_commit=off for this one statement's transaction (set_config(…, true) lasts
      // until its commit): committed before we return, without waiting for the WAL flush. A
      // database crash in the next moment can only turn the row back into `settling`, the attempt
      // committed durably before the money moved, which `arrow402 payments` lists as unconfirmed.
      const updated = await sql`
        WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))
        UPDATE arrow402_payments SET status = 'settled', tx_hash = ${settlement.transaction}, payer = ${settlement.payer},
          settled_at = ${settlement.settledAt}, rows = ${settlement.rows},
          answer_digest = ${settlement.answer?.digest ?? null}, answer_format = ${settlement.answer?.format ?? null}
        FROM no_flush
        WHERE payment_key = ${paymentKey} AND status = 'settling'`;
      if (updated.count !== 1) throw noAttemptInProgress(paymentKey);
    }),
    recordAnswer: reachable(async (paymentKey: string, answer: DeliveredAnswer, rows: number | null) => {
      await sql`
        UPDATE arrow402_payments SET answer_digest = ${answer.digest}, answer_format = ${answer.format}, rows = ${rows}
        WHERE payment_key = ${paymentKey} AND status = 'settled' AND answer_digest IS NULL`;
    }),
    countReplay: reachable(async (paymentKey: string, max: number) => {
      const counted = await sql`
        UPDATE arrow402_payments SET replays = replays + 1
        WHERE payment_key = ${paymentKey} AND status = 'settled' AND replays < ${max}`;
      return counted.count === 1;
    }),
    abandon: reachable(async (paymentKey: string, claim: Claim) => {
      // Only while the holder still holds the payment's claim: FOR SHARE makes a takeover wait for
      // this statement, or this statement see the takeover (READ COMMITTED rechecks the locked row).
      const deleted = await sql`
        DELETE FROM arrow402_payments WHERE payment_key = ${paymentKey} AND status = 'settling'
          AND EXISTS (SELECT 1 FROM arrow402_claims WHERE payment_key = ${paymentKey} AND holder = ${claim.holder} FOR SHARE)`;
      return deleted.count === 1;
    }),
    list: reachable(async (filter?: { since?: Date }) => {
      const rows = (await sql`${select()} WHERE status = 'settled' AND settled_at >= ${since(filter)} ORDER BY settled_at, id`) as Row[];
      return rows.map(toRecord);
    }),
    unconfirmed: reachable(async () => {
      const rows = (await sql`${select()} WHERE status = 'settling' ORDER BY settled_at, id`) as Row[];
      return rows.map(toRecord);
    }),
    totals: reachable(async (filter?: { since?: Date }) => {
      // An asset is one token whatever the case of its address; shown in its smallest spelling (byte order).
      const rows = (await sql`
        SELECT table_name, network, min(asset COLLATE "C") AS asset, count(*)::int AS payments, sum(amount)::text AS amount
        FROM arrow402_payments
        WHERE status = 'settled' AND settled_at >= ${since(filter)}
        GROUP BY table_name, network, lower(asset)`) as { table_name: string; network: string; asset: string; payments: number; amount: string }[];
      return sortTotals(
        rows.map((row): PaymentTotal => ({
          tableName: row.table_name,
          network: row.network,
          asset: row.asset,
          payments: row.payments,
          amount: BigInt(row.amount),
        })),
      );
    }),
    ping: reachable(async () => {
      await sql`SELECT 1`;
    }),
    async close() {
      if (closed) return;
      closed = true;
      leases.stop();
      await sql.close();
    },
  };
}

/**
 * Bun's codes for a connection that could not be made or was lost, and the SQLSTATEs of a server
 * that is shutting down, starting or out of connections (class 08, 57P01–57P03, 53300): the
 * ledger is unreachable for now, which is not the statement's fault.
 */
const UNREACHABLE_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
]);
const UNREACHABLE_STATES = /^(08...|57P0[123]|53300)$/;

function isUnreachable(error: unknown): boolean {
  if (!(error instanceof SQL.PostgresError)) return false;
  return UNREACHABLE_CODES.has(error.code) || (error.errno !== undefined && UNREACHABLE_STATES.test(error.errno));
}

/**
 * Store methods with an unreachable server reported as LedgerUnavailableError (503, nothing
 * charged), also when it does not answer within `timeoutMs`. A statement given up on may still run
 * once the server answers again; each is safe then: a late claim is never renewed and expires
 * within its lease, a late attempt is an unconfirmed attempt that was never sent to /settle
 * (presented again or reconciled, it is settled or removed), a late confirmation records what
 * happened.
 */
function reachableWithin(timeoutMs: number) {
  return <A extends unknown[], R>(method: (...args: A) => Promise<R>): ((...args: A) => Promise<R>) =>
    async (...args) => {
      const silent = (): never => {
        throw new LedgerUnavailableError({ cause: new Error(`no answer within ${timeoutMs} ms`) });
      };
      try {
        return await withDeadline(() => method(...args), timeoutMs, silent);
      } catch (error) {
        throw isUnreachable(error) ? new LedgerUnavailableError({ cause: error }) : error;
      }
    };
}

function toRecord(row: Row): PaymentRecord {
  return {
    status: row.status,
    settledAt: row.settled_at,
    tableName: row.table_name,
    resourceUrl: row.resource_url,
    query: row.query,
    rows: row.rows === null ? null : Number(row.rows),
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
