/**
 * The query service (ARCHITECTURE.md §9): one query, from SQL text to the answer, for every transport.
 * `GET /api/query` and the MCP `query` tool are bindings over it, so validation, limits, prices
 * and the payment flow exist once. It takes plain values (the SQL, the resource URL the payment
 * is bound to, the decoded payment) and returns the answer as a value: data (with the settlement
 * receipt when paid) or the 402 body. Failures are the error classes of errors.ts.
 *
 * What decides a price is what is delivered (§6 "Replay and races"): a paid result is held from
 * the run the payment was checked against until settlement, and "free because empty" delivers the
 * empty result the count found, never a second read.
 */
import { arrowTypeFor } from "../arrow/types.ts";
import type { Config, PriceTag } from "../config/types.ts";
import type { BufferedResult, QueryExecutor, QueryResult } from "../results/executor.ts";
import { BadRequestError, ClientGoneError, PaidQueryFailedError, TooManyRowsError, ValueDoesNotFitError } from "../errors.ts";
import type { PaymentCore, SettlementReceipt } from "../payment/core.ts";
import type { VerifyBudget } from "../payment/work.ts";
import { queryExtensions, type Extensions } from "../payment/extensions.ts";
import type { ExactPaymentPayload } from "../payment/payload.ts";
import type { PaidResource, PaymentRequiredBody } from "../payment/pricing.ts";
import { queriesArePaid, quotesRevealNothing } from "../payment/terms.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";
import { DEFAULT_FORMAT, type OutputFormat } from "../formats/registry.ts";

export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

export interface QueryServiceDeps {
  config: Config;
  /** Validates Simplified SQL (cached by text). */
  validate: (sql: string) => ValidatedQuery | Promise<ValidatedQuery>;
  executor: QueryExecutor;
  payments: PaymentCore;
}

export interface QueryRun {
  sql: string;
  /** The URL the payment is bound to: for a query, the SQL is part of it (§6). */
  resourceUrl: string;
  /** Read once, after the SQL is validated: a binding may decode it then (a malformed one throws its 400). */
  payment: ExactPaymentPayload | null;
  /** The output format (formats/registry.ts); Arrow by default. Same rows and price in every format. */
  format?: OutputFormat;
  /** Aborted when the client has gone away. */
  signal?: AbortSignal;
  /** Called before an unpaid request on a paid table is quoted (the HTTP binding checks its retry will fit). */
  beforeQuote?: (resource: PaidResource, tags: PriceTag[], extensions: Extensions) => void;
  /**
   * A transport's own cap on one answer (MCP: `limits.mcp_max_rows`, below max_rows, and
   * `limits.mcp_max_bytes`). A larger result is refused, never truncated, and never charged: its
   * rows before any payment is taken (a per_row quote knows the count, and a fixed-price query is
   * counted before it is quoted or paid), its bytes once read, before settlement.
   */
  answerCap?: AnswerCap;
  /** The client's allowance of refused payments (routes/refused-payments.ts). */
  verifyBudget?: VerifyBudget;
}

export interface AnswerCap {
  /** The most rows. */
  max: number;
  /** The refusal's message for a result of `rows` rows: what to do instead. */
  refusal(rows: number): string;
  /** The refusal's message for a query of a table sold per query whose LIMIT does not bound it. */
  needsLimit: string;
  /** The most bytes of the encoded result (Arrow over MCP). */
  maxBytes: number;
  /** The refusal's message for a result over `maxBytes`: what to do instead. */
  tooLarge: string;
}

export type QueryAnswer =
  | { kind: "data"; table: string; format: OutputFormat; result: QueryResult; receipt: SettlementReceipt | null }
  | { kind: "payment-required"; body: PaymentRequiredBody; settlement?: SettlementReceipt };

export interface QueryService {
  run(request: QueryRun): Promise<QueryAnswer>;
}

export function createQueryService(deps: QueryServiceDeps): QueryService {
  const { config, executor } = deps;

  /** Refuses a result of `rows` rows when it is over max_rows or the transport's cap. */
  function checkRows(rows: number, cap: AnswerCap | undefined): void {
    if (rows > config.limits.maxRows) throw new TooManyRowsError(rows, config.limits.maxRows);
    if (cap !== undefined && rows > cap.max) throw new BadRequestError(cap.refusal(rows));
  }

  /** The per_row quote's row count; a result over the limits would be refused once paid, so it is refused now. */
  async function countWithinLimit(query: ValidatedQuery, cap: AnswerCap | undefined): Promise<number> {
    const rows = await executor.count(query);
    checkRows(rows, cap);
    return rows;
  }

  /**
   * Under a cap, a query that its LIMIT does not bound is counted (cached) before anything is
   * priced. Not on a table whose quotes tell nothing about the data: refused or not, the count
   * would say for nothing how many rows any WHERE matches, which is the data it sells; such a
   * query needs a LIMIT within the cap instead. A per_row quote by count states its count anyway.
   */
  async function checkCap(query: ValidatedQuery, cap: AnswerCap | undefined): Promise<void> {
    if (cap === undefined || (query.limit !== null && query.limit <= cap.max)) return;
    if (quotesRevealNothing(query.table.config.priceTags)) throw new BadRequestError(cap.needsLimit);
    await countWithinLimit(query, cap);
  }

  /**
   * On a table whose quotes tell nothing about the data, what could fail after payment depending
   * on the data is refused before (DESIGN.md §17): a result over max_rows (a LIMIT within it is
   * required; `LIMIT … OFFSET k` would otherwise say whether more than k + max_rows rows match)
   * and the constructs that fail on a value (sql/data-failures.ts).
   */
  function checkSealed(query: ValidatedQuery, failsOnData: string | null): void {
    const max = config.limits.maxRows;
    if (query.limit === null || query.limit > max) {
      throw new BadRequestError(
        `Queries of table '${query.table.name}' need a LIMIT of at most ${max} (this table does not tell how many rows a query matches before payment): add LIMIT n, e.g. LIMIT ${Math.min(max, 1000)}`,
      );
    }
    if (failsOnData !== null) throw new BadRequestError(`On table '${query.table.name}', ${failsOnData}`);
  }

  /**
   * A failure after /verify on such a table gets one answer (PaidQueryFailedError), sent no earlier
   * than the time limit would have expired from `started`, and counts as a refused payment of its
   * client (`limits.max_refused_payments_per_minute`): the same signed payment, never settled,
   * cannot probe the table without bound. A client that left and faults of the server (500, 503)
   * are not the data's doing and keep their own answers.
   */
  async function asPaidFailure(error: unknown, started: number, budget: VerifyBudget | undefined): Promise<never> {
    const fromData = (error instanceof BadRequestError && !(error instanceof ClientGoneError)) || error instanceof ValueDoesNotFitError;
    if (!fromData) throw error;
    try {
      budget?.take(); // kept: a place given back only when the minute is over
    } catch {
      // No place left: this answer stands; the client's next payment gets 429 before /verify.
    }
    const timeLimitMs = config.limits.queryTimeoutMs;
    const wait = started + timeLimitMs - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    throw new PaidQueryFailedError(timeLimitMs);
  }

  /** The whole result, refused if it is over the limits (the data may have changed since a count). */
  async function collectWithinLimit(query: ValidatedQuery, cap: AnswerCap | undefined, format: OutputFormat, signal?: AbortSignal): Promise<BufferedResult> {
    const buffered = await executor.collect(query, format, cap?.maxBytes, signal);
    if (buffered === null) throw new BadRequestError(cap!.tooLarge);
    try {
      checkRows(buffered.rows, cap);
    } catch (error) {
      buffered.release();
      throw error;
    }
    return buffered;
  }

  return {
    async run(request) {
      const query = await deps.validate(request.sql);
      const payment = request.payment;
      const table = query.table.name;
      const format = request.format ?? DEFAULT_FORMAT;
      const data = (result: QueryResult, receipt: SettlementReceipt | null): QueryAnswer => ({ kind: "data", table, format, result, receipt });
      const tags = query.table.config.priceTags;
      const cap = request.answerCap;
      // The engine's refusal (a construct it cannot run with the dialect's meaning) comes before any price.
      const { failsOnData } = executor.check(query);
      const sealed = quotesRevealNothing(tags);
      // A transport's cap first: its refusal names the cap a LIMIT must be within.
      await checkCap(query, cap);
      if (sealed) checkSealed(query, failsOnData);
      // Under a cap the whole (small) result is read and checked; otherwise it streams.
      const deliver = async () => (cap === undefined ? executor.stream(query, format) : (await collectWithinLimit(query, cap, format, request.signal)).result);
      if (!queriesArePaid(tags)) return data(await deliver(), null);
      const resource = { url: request.resourceUrl, description: config.payment.defaultDescription, mimeType: format.mediaType };
      const extensions = queryExtensions({
        sql: request.sql,
        maxQueryBytes: config.limits.maxQueryBytes,
        formatName: format.name,
        mediaType: format.mediaType,
        // Where the schema itself is sold, a 402 must not give it away (ARCHITECTURE.md §6, §13).
        fields: tags.some((tag) => tag.type === "metadata_price") ? null : exampleFields(query),
      });
      if (payment === null) request.beforeQuote?.(resource, tags, extensions);

      // The paid result, read before settlement; freed if it is not delivered (held-result.ts).
      let held: BufferedResult | null = null;
      const releaseHeld = () => (held as BufferedResult | null)?.release();
      // Once the outcome is known, a read still running is nobody's: one started while /verify ran
      // (executeEarly) when the payment was then refused. It is stopped, and freed if it ends.
      const outcomeKnown = new AbortController();
      const readSignal = request.signal === undefined ? outcomeKnown.signal : AbortSignal.any([request.signal, outcomeKnown.signal]);
      let counted: number | null = null;
      const outcome = await deps.payments.process({
        tags,
        tableName: table,
        query: request.sql,
        limit: query.limit,
        format: format.name,
        resource,
        extensions,
        payload: payment,
        signal: request.signal,
        verifyBudget: request.verifyBudget,
        countRows: async () => (counted = await countWithinLimit(query, cap)),
        executeEarly: executor.isSmall(query),
        // A result over the limits fails here, after /verify and before /settle: never charged.
        execute: async () => {
          const started = performance.now();
          try {
            // Read only while its buyer waits: a client gone stops the read (nothing is settled).
            releaseHeld();
            const read = await collectWithinLimit(query, cap, format, readSignal);
            if (outcomeKnown.signal.aborted) read.release();
            else held = read;
            return { rows: read.rows, answer: { digest: read.digest, format: format.name } };
          } catch (error) {
            return sealed ? asPaidFailure(error, started, request.verifyBudget) : Promise.reject(error);
          }
        },
      })
        .catch((error: unknown) => {
          // Outcome first: a read ending in between then frees itself instead of becoming `held`.
          outcomeKnown.abort();
          releaseHeld();
          throw error;
        })
        .finally(() => outcomeKnown.abort());
      if (outcome.kind === "payment-required") {
        releaseHeld();
        return { kind: "payment-required", body: outcome.body, settlement: outcome.settlement };
      }
      const receipt = outcome.kind === "paid" ? outcome.receipt : null;
      if (held !== null) return data((held as BufferedResult).result, receipt);
      // Free without running the query: the count that priced it found no rows, so the answer is
      // that empty result; otherwise nothing was priced from the data (a zero price) and it streams.
      if (counted === 0) return data(executor.empty(query, format), receipt);
      return data(await deliver(), receipt);
    },
  };
}

/** The result's Arrow fields, as the table endpoint describes them (ARCHITECTURE.md §3). */
function exampleFields(query: ValidatedQuery) {
  return query.columns.map(({ name, column }) => ({ name, data_type: arrowTypeFor(column).toString(), nullable: column.nullable }));
}
