/**
 * The payment store: every piece of payment state, behind one asynchronous interface, so that one
 * process (SQLite, the default) and any number of replicas (PostgreSQL, `ledger.url`) run the same
 * payment flow. Implementations: store/sqlite.ts, store/postgres.ts; one contract test runs
 * against both.
 *
 * A payment is identified by its key (network|asset|from|nonce, lower-case: wire.ts `paymentKey`);
 * the EIP-3009 nonce is unique per token and payer, so a key names one possible transfer.
 *
 * Life of a record:
 *   begin   → status `settling`: committed durably *before* the facilitator is asked to settle,
 *             so a crash after the money moved leaves a record, never nothing.
 *   confirm → status `settled`, with the transaction hash and the rows delivered.
 *   abandon → the `settling` record is deleted: only while no money can have moved because of it
 *             (before /settle was asked, or /settle answered `success:false`), and only by the
 *             holder of the payment's claim.
 * A record is only ever changed by the request that created it (or by recovery, which confirms an
 * attempt whose transfer is found on chain): a refused request never rewrites another's record.
 */

export type PaymentStatus = "settling" | "settled";

export interface PaymentRecord {
  status: PaymentStatus;
  /**
   * When the attempt began (settling), or when the facilitator confirmed settlement (settled); a
   * transfer found on chain instead is dated by its block.
   */
  settledAt: Date;
  tableName: string;
  /** The paid resource's URL (for a query, the SQL is part of it). */
  resourceUrl: string;
  /** The SQL for a query; null for metadata. */
  query: string | null;
  /** Rows delivered (settled), or the rows the price was computed from (settling); null for metadata and unknown. */
  rows: number | null;
  /** Smallest token units. */
  amount: bigint;
  asset: string;
  network: string;
  payer: string;
  payTo: string;
  /** The settlement's transaction hash ('' while settling). */
  transaction: string;
  /** network|asset|from|nonce, lower-case (wire.ts `paymentKey`). */
  paymentKey: string;
  /** The x402 `payment-identifier` extension's id, when the payload carried one (unique). */
  paymentId: string | null;
  /** EIP-3009 validBefore (Unix seconds). */
  validBefore: bigint;
  /** JSON of the signed `payload` (signature and authorization), to recognise the same payment. */
  signedPayload: string;
  /**
   * The answer delivered for a settled query: the SHA-256 (hex) of its encoded bytes and the name of
   * their format (formats/registry.ts), so that a replay serves that very answer (DESIGN.md §17 "A
   * replay is the same answer"); null while settling, for metadata, and for records of earlier versions.
   */
  answer: DeliveredAnswer | null;
  /** Times the settled payment has been served again (replays.ts, `limits.max_replays`). */
  replays: number;
}

export interface DeliveredAnswer {
  digest: string;
  format: string;
}

/** What is known before settling: everything but the facilitator's answer. */
export type SettlementAttempt = Omit<PaymentRecord, "status" | "transaction" | "settledAt" | "answer" | "replays"> & { attemptedAt: Date };

export interface Settlement {
  transaction: string;
  payer: string;
  settledAt: Date;
  /** Rows delivered; null for metadata. */
  rows: number | null;
  /** The answer delivered (a query's); null for metadata. */
  answer: DeliveredAnswer | null;
}

export interface PaymentTotal {
  tableName: string;
  network: string;
  asset: string;
  payments: number;
  amount: bigint;
}

/**
 * The one-request-per-payment lock, held by this request until `release`: a short lease in the
 * store (store/leases.ts, CLAIM_LEASE_MS) that the store handle renews while it is held, so that
 * a holder that dies (SIGKILL, a lost replica) frees the payment within seconds (DESIGN §16).
 */
export interface Claim {
  /** Opaque: names this holder in the store (`abandon` is refused to a holder that lost its claim). */
  readonly holder: string;
  /**
   * True once a renewal found the claim taken over or cleared: its lease ran out (this process or
   * the ledger stalled longer than the lease) and another request may hold the payment now.
   */
  readonly lost: boolean;
  /** Frees the payment for other requests (any replica) and stops renewing; idempotent. */
  release(): Promise<void>;
}

export interface PaymentStore {
  /** Where the state lives, for messages and logs: a path, or a URL without credentials. */
  readonly location: string;
  /**
   * Takes the one-request-per-payment lock for `paymentKey` across every process sharing the
   * store; null when another request holds it. Renewed until `release`; a holder that stops
   * renewing (it died) loses it once its lease has run out.
   */
  claim(paymentKey: string): Promise<Claim | null>;
  /** The record of a payment, settled or settling. */
  find(paymentKey: string): Promise<PaymentRecord | undefined>;
  /** The record carrying this payment-identifier id, settled or settling. */
  findByPaymentId(paymentId: string): Promise<PaymentRecord | undefined>;
  /**
   * Commits a settlement attempt (`settling`) durably. Throws when a record already exists for
   * the key (or the payment id): an attempt never overwrites another record.
   */
  begin(attempt: SettlementAttempt): Promise<void>;
  /**
   * Marks a `settling` attempt settled. Committed before returning (it may skip waiting for the
   * disk: a power loss can then only turn it back into `settling`, never lose it). Throws when
   * there is no `settling` attempt for the key.
   */
  confirm(paymentKey: string, settlement: Settlement): Promise<void>;
  /**
   * Counts one more replay of a settled payment, unless it has been served again `max` times
   * already; false then. Atomic across every process sharing the store.
   */
  countReplay(paymentKey: string, max: number): Promise<boolean>;
  /**
   * Records the answer first delivered for a settled payment that had none (its settlement was
   * recovered from the chain when its answer could not be delivered, or an earlier version settled
   * it), with the rows delivered; a recorded answer is never replaced.
   */
  recordAnswer(paymentKey: string, answer: DeliveredAnswer, rows: number | null): Promise<void>;
  /**
   * Deletes a `settling` attempt (nothing was charged), only while `claim` still holds the payment:
   * a holder whose lease ran out never deletes what another request may be working on. A settled
   * record is never deleted. Resolves to whether an attempt was deleted.
   */
  abandon(paymentKey: string, claim: Claim): Promise<boolean>;
  /** Settled payments, oldest first. */
  list(filter?: { since?: Date }): Promise<PaymentRecord[]>;
  /** Attempts whose outcome is unknown (the process stopped or the facilitator never answered), oldest first. */
  unconfirmed(): Promise<PaymentRecord[]>;
  /** Settled totals per table, network and asset, sorted by table then network. */
  totals(filter?: { since?: Date }): Promise<PaymentTotal[]>;
  /** Resolves when the store answers a trivial query (readiness); rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
