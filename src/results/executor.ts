/**
 * Runs validated queries on the engine of their table's source (engines/engine.ts) and delivers
 * what it reads, whatever the engine (ARCHITECTURE.md §9, §11): results kept for repeated queries (result-cache.ts), the
 * unsent-bytes budget (sent-body.ts), and results read whole before they are answered — a paid
 * answer held until its settlement, mostly on disk (held-result.ts), with the digest a replay is
 * compared by, or a transport's capped answer.
 */
import type { TableEngine } from "../engines/engine.ts";
import { ClientGoneError, ResultNotHeldError, ServerBusyError } from "../errors.ts";
import { DEFAULT_FORMAT, type OutputFormat } from "../formats/registry.ts";
import { encoderColumns, type ValidatedQuery } from "../sql/validated.ts";
import { HELD_IN_MEMORY_BYTES, HeldResult } from "./held-result.ts";
import type { SendingOptions } from "./outgoing.ts";
import { ResultCache } from "./result-cache.ts";
import { ResultTooLarge, rowsOfBody, type QueryResult } from "./result-stream.ts";
import { BUSY_MESSAGE, BUSY_RETRY_SECONDS, UnsentBytes } from "./sent-body.ts";
import { SpillBudget } from "./spill.ts";

export type { QueryResult } from "./result-stream.ts";

export interface DeliveryLimits {
  /** A response whose client reads nothing for this long is cut (default SEND_TIMEOUT_MS). */
  sendTimeoutMs?: number;
  /** Spill files of all responses together stay within this many MiB (default SPILL_BUDGET_MB). */
  spillBudgetMb?: number;
  /** Complete answers not yet taken by their clients stay within this many MiB (default UNSENT_BUDGET_MB). */
  unsentBudgetMb?: number;
}

/** No read for this long while a producer waits on the client: it finishes into a spill file. */
export const STALL_MS = 250;
const SEND_TIMEOUT_MS = 60_000;
/** Spill files of all responses together stay within this (then slow readers hold their producer). */
const SPILL_BUDGET_MB = 4_096;
const UNSENT_BUDGET_MB = 256;

/**
 * A result read whole (a paid or capped answer): complete chunks, or, past HELD_IN_MEMORY_BYTES,
 * a body read back from a spill file (held-result.ts). `release` frees it if it is not sent.
 */
export interface BufferedResult {
  result: QueryResult;
  rows: number;
  bytes: number;
  /**
   * SHA-256 (hex) of the encoded bytes: a settled payment presented again is served only the answer
   * whose digest was recorded at settlement (DESIGN.md §17). A result read whole comes from one
   * worker, so the same rows encode to the same bytes however they were read.
   */
  digest: string;
  release(): void;
}

export class QueryExecutor {
  /** How responses wait for their clients: spill files, unsent complete answers, the send timeout. */
  readonly sending: SendingOptions;
  private readonly results = new ResultCache();
  /** For operators and tests: results answered from the result cache (result-cache.ts). */
  readonly stats = { resultCacheHits: 0 };

  /** The engine of each source, by its name in the config (TableConfig.database). */
  private readonly engines: ReadonlyMap<string, TableEngine>;

  constructor(engines: ReadonlyMap<string, TableEngine> | TableEngine, limits: DeliveryLimits) {
    this.engines = engines instanceof Map ? engines : new Map([["", engines as TableEngine]]);
    this.sending = {
      stallMs: STALL_MS,
      sendTimeoutMs: limits.sendTimeoutMs ?? SEND_TIMEOUT_MS,
      budget: new SpillBudget((limits.spillBudgetMb ?? SPILL_BUDGET_MB) * 1024 ** 2),
      unsent: new UnsentBytes((limits.unsentBudgetMb ?? UNSENT_BUDGET_MB) * 1024 ** 2),
    };
  }

  /** Bytes of small results kept to answer repeated queries (result-cache.ts), for operators. */
  get resultCacheBytes(): number {
    return this.results.bytes;
  }

  /** Bytes of stalled readers' responses waiting in spill files (outgoing.ts), for operators. */
  get spillBytes(): number {
    return this.sending.budget.usedBytes;
  }

  /** Bytes written to spill files since start. */
  get spilledBytes(): number {
    return this.sending.budget.spilledBytes;
  }

  close(): void {
    for (const engine of this.engines.values()) engine.close();
  }

  /** The engine that serves the query's table (the only one, when there is one). */
  private engineOf(query: ValidatedQuery): TableEngine {
    const engine = this.engines.size === 1 ? this.engines.values().next().value : this.engines.get(query.table.config.database);
    if (engine === undefined) throw new Error(`no engine serves the source '${query.table.config.database}'`);
    return engine;
  }

  /** The engine's word on the query before anything is priced (engines/engine.ts `check`): a 400, or what can fail on a value. */
  check(query: ValidatedQuery): { failsOnData: string | null } {
    return this.engineOf(query).check(query);
  }

  /** Whether the query is a provably small read: cheap whatever the data. */
  isSmall(query: ValidatedQuery): boolean {
    return this.engineOf(query).isSmall?.(query) ?? false;
  }

  /** Number of rows the query returns, without materialising them. */
  count(query: ValidatedQuery): Promise<number> {
    return this.engineOf(query).count(query);
  }

  /** The result cache's answer for this query, if it has one at this data version. */
  private kept(query: ValidatedQuery, format: OutputFormat, version: bigint | null): QueryResult | null {
    const result = this.results.get(query, format, version);
    if (result !== null) this.stats.resultCacheHits++;
    return result;
  }

  /** A small read the engine does at once (see engines/sqlite/inline.ts), or null. */
  private readNow(query: ValidatedQuery, format: OutputFormat): QueryResult | null {
    const small = this.engineOf(query).readNow?.(query, format) ?? null;
    return small === null ? null : { complete: small.chunks, rows: small.rows };
  }

  /** The result of a query known to be empty: its schema (or header) and no rows (no read needed). */
  empty(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT): QueryResult {
    const encoder = format.create(encoderColumns(query));
    return { complete: [encoder.head(), encoder.end()], rows: 0 };
  }

  /** Streams the result. Resolves when the first rows are ready; rejects on early failure. */
  async stream(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT): Promise<QueryResult> {
    // Answers already wait for clients that do not read them up to the budget: a free query is not
    // read only to be refused once complete (sent-body.ts).
    if (this.sending.unsent.full) throw new ServerBusyError(BUSY_MESSAGE, BUSY_RETRY_SECONDS);
    const version = this.engineOf(query).dataVersion?.() ?? null;
    const result =
      this.kept(query, format, version) ??
      this.readNow(query, format) ??
      (await this.engineOf(query).read(query, format, { streamed: true, maxBytes: null, sending: this.sending }));
    return "complete" in result ? this.results.put(query, format, version, result) : result;
  }

  /**
   * Runs the query to the end and keeps the bytes (priced per row before delivery). Nothing is
   * sent before the end, so a result over max_rows needs no count first: the scan finds it. Null
   * once the result is found to be over `maxBytes` (a transport's cap): the read is stopped there.
   * Once `signal` is aborted (the client went away) the read stops and `ClientGoneError` is thrown:
   * nobody would receive what is held, and a paid result is only held for its buyer.
   */
  async collect(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal): Promise<BufferedResult | null> {
    if (signal?.aborted) throw new ClientGoneError();
    const version = this.engineOf(query).dataVersion?.() ?? null;
    const capped = Number.isFinite(maxBytes) ? maxBytes : null;
    let result: QueryResult;
    try {
      result =
        this.kept(query, format, version) ??
        this.readNow(query, format) ??
        (await this.engineOf(query).read(query, format, { streamed: false, maxBytes: capped, sending: this.sending }));
    } catch (error) {
      // The worker stopped at the cap: the values alone were over it.
      if (error instanceof ResultTooLarge) return null;
      throw error;
    }
    let bytes = 0;
    const digest = new Bun.CryptoHasher("sha256");
    if ("complete" in result) {
      bytes = result.complete.reduce((sum, chunk) => sum + chunk.byteLength, 0);
      for (const chunk of result.complete) digest.update(chunk);
    } else {
      // A capped read is small; an uncapped one (a paid answer) waits for its settlement, mostly on disk.
      const held = new HeldResult(this.sending, Number.isFinite(maxBytes) ? Number.POSITIVE_INFINITY : HELD_IN_MEMORY_BYTES);
      try {
        for await (const chunk of result.body) {
          if (signal?.aborted) throw new ClientGoneError();
          // Leaving the loop (the catch below releases it) stops the read: nothing is settled.
          if (!held.add(chunk)) throw new ResultNotHeldError();
          bytes += chunk.byteLength;
          digest.update(chunk);
          // Leaving the loop cancels the body, which stops its workers.
          if (bytes > maxBytes) {
            held.release();
            return null;
          }
        }
        await held.ready();
      } catch (error) {
        held.release();
        throw error;
      }
      const rows = rowsOfBody(result.body) ?? 0;
      if (held.spilled) {
        // The body, and with it its send timeout, is made when the answer is sent: after settlement.
        let body: QueryResult | null = null;
        return {
          get result() {
            return (body ??= { body: held.body(rows) });
          },
          rows,
          bytes,
          digest: digest.digest("hex"),
          release: () => held.release(),
        };
      }
      result = { complete: held.chunks, rows };
      held.release();
    }
    if (bytes > maxBytes) return null;
    const kept = this.results.put(query, format, version, result);
    return { result: kept, rows: kept.rows, bytes, digest: digest.digest("hex"), release: () => {} };
  }
}
