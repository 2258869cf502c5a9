/**
 * Provably small reads on the HTTP thread. A query over a table (or a view that only picks columns
 * of one table) with no WHERE and no ORDER BY makes SQLite read at most LIMIT + OFFSET rows and
 * stop, with no expression evaluated per row (the select list holds only columns): its cost is
 * bounded and tiny, smaller than the round trip to a worker. Every other query runs on the worker pool, so a long query still never stalls
 * other requests.
 *
 * Small reads share one read transaction for at most SNAPSHOT_MS. Starting a read transaction
 * costs SQLite eight system calls on a rollback-journal file (take the shared lock, look for a hot
 * journal, read the change counter, look for a WAL, release): more than reading ten rows. So a
 * change committed to the file reaches small reads at most SNAPSHOT_MS later, and a writer waits
 * at most that long for the shared lock, as it waits for any running query. The HTTP thread never
 * waits for a writer: when the file is locked, the read goes to a worker, which does.
 */
import type { Database } from "bun:sqlite";
import { createStreamEncoder, ValueDoesNotFit, type StreamEncoder } from "../arrow/encode.ts";
import { encodeAll } from "../formats/encoder.ts";
import { DEFAULT_FORMAT, type OutputFormat } from "../formats/registry.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";
import { isBusy, openReadOnly } from "./catalog.ts";
import { encoderColumns } from "./protocol.ts";

/** The most rows an inline read may touch (LIMIT + OFFSET). */
export const INLINE_MAX_ROWS = 1000;

/** How long small reads share one read transaction (see above). */
export const SNAPSHOT_MS = 2;

export interface InlineResult {
  chunks: Uint8Array[];
  rows: number;
}

export class InlineReader {
  private readonly db: Database;
  private readonly encoders = new WeakMap<ValidatedQuery, StreamEncoder>();
  private snapshotEnd: ReturnType<typeof setTimeout> | null = null;

  constructor(
    dbPath: string,
    private readonly maxRows: number,
  ) {
    // Exact integers, as in the workers (DESIGN.md §5).
    this.db = openReadOnly(dbPath, { safeIntegers: true });
  }

  eligible(query: ValidatedQuery): boolean {
    if (!query.table.limitBounded || query.filtered || query.ordered || query.limit === null) return false;
    return query.limit + (query.offset ?? 0) <= INLINE_MAX_ROWS && query.limit <= this.maxRows;
  }

  /**
   * The whole Arrow stream of an eligible query, or null when it must go to a worker: a stored
   * value does not fit its type (the worker reports it with its rowid), or a writer holds the file.
   */
  read(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT): InlineResult | null {
    const stmt = this.db.query(query.sql);
    if (!stmt.readonly) return null;
    this.openSnapshot();
    let rows: unknown[][];
    try {
      rows = stmt.values();
    } catch (error) {
      if (!isBusy(error)) throw error;
      this.closeSnapshot();
      return null;
    }
    try {
      // Arrow, the common case, as one buffer from an encoder kept with the query; other formats anew.
      const bytes = format.name === "arrow" ? this.encoderFor(query).wholeStream(rows) : encodeAll(format.create(encoderColumns(query)), rows);
      return { chunks: [bytes], rows: rows.length };
    } catch (error) {
      if (error instanceof ValueDoesNotFit) return null;
      throw error;
    }
  }

  private openSnapshot(): void {
    if (this.snapshotEnd !== null) return;
    this.db.run("BEGIN");
    this.snapshotEnd = setTimeout(() => this.closeSnapshot(), SNAPSHOT_MS);
  }

  private closeSnapshot(): void {
    if (this.snapshotEnd === null) return;
    clearTimeout(this.snapshotEnd);
    this.snapshotEnd = null;
    this.db.run("COMMIT");
  }

  /** The encoder of a query, kept while its validation is cached. */
  private encoderFor(query: ValidatedQuery): StreamEncoder {
    let encoder = this.encoders.get(query);
    if (!encoder) {
      encoder = createStreamEncoder(encoderColumns(query));
      this.encoders.set(query, encoder);
    }
    return encoder;
  }

  close(): void {
    this.closeSnapshot();
    this.db.close();
  }
}
