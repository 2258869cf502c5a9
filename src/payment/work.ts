/**
 * The payment core's inputs and outcomes (core.ts), as values: what is sold and how to do the
 * work, and what the transport bindings turn into responses (HTTP headers, MCP `_meta`).
 */
import type { PriceTag } from "../config/types.ts";
import type { Extensions } from "./extensions.ts";
import type { ExactPaymentPayload } from "./payload.ts";
import type { PaidResource, PaymentRequiredBody } from "./pricing.ts";
import type { DeliveredAnswer } from "./store.ts";

/** What is being sold, and how to do the work; the core calls these only when the payment allows. */
export interface PaidWork {
  /** Every price tag of the table: per_row and fixed price queries, metadata_price the metadata (and empty results). */
  tags: PriceTag[];
  tableName: string;
  /** The SQL for a query; null for the metadata endpoint. */
  query: string | null;
  /** The query's LIMIT, which prices per_row tags quoted by limit (null: none, or metadata). */
  limit?: number | null;
  resource: PaidResource;
  /** x402 extensions advertised in every 402 of this work (payment/extensions.ts). */
  extensions?: Record<string, unknown>;
  /** The decoded, well-formed payment, or null when none was sent. */
  payload: ExactPaymentPayload | null;
  /** `SELECT count(*)` over the query (cached by the query service), for per_row prices quoted by count. */
  countRows?: () => Promise<number>;
  /** The name of the answer's format (formats/registry.ts) for a query: a replay is served only in it. */
  format?: string;
  /** Runs the query (or builds the document) and holds the result. */
  execute: () => Promise<ExecutedWork>;
  /** A provably cheap query (engines/sqlite/engine.ts `isSmall`): a fixed-price one may run while /verify is in flight. */
  executeEarly?: boolean;
  /** Aborted when the client has gone away: nothing is settled for a response nobody receives. */
  signal?: AbortSignal;
  /** The client's allowance of refused payments (routes/refused-payments.ts). */
  verifyBudget?: VerifyBudget;
}

/** What the work produced: a query's row count and the fingerprint of its answer (both null for metadata). */
export interface ExecutedWork {
  rows: number | null;
  answer: DeliveredAnswer | null;
}

/**
 * How many refused payments a client may still cause. A payment takes one place before its chain
 * read and its /verify (so a burst of payments being checked is bounded too) and gives it back
 * unless it is refused, on the chain's balance or by the facilitator.
 */
export interface VerifyBudget {
  /** Takes a place, or throws (429) when none is left; returns the function that gives it back. */
  take(): () => void;
}

/** The x402 SettleResponse, sent back in PAYMENT-RESPONSE (HTTP) or `_meta["x402/payment-response"]` (MCP). */
export interface SettlementReceipt {
  success: boolean;
  transaction: string;
  network: string;
  payer?: string;
  errorReason?: string;
}

export type PaymentOutcome =
  | { kind: "free" }
  | { kind: "payment-required"; body: PaymentRequiredBody; settlement?: SettlementReceipt }
  | { kind: "paid"; receipt: SettlementReceipt };
