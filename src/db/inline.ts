/**
 * Provably small reads on the HTTP thread. A query over a table (not a view) with no WHERE and no
 * ORDER BY makes SQLite read at most LIMIT + OFFSET rows and stop, with no expression evaluated per
 * row (the select list holds only columns): its cost is bounded and tiny, smaller than the round
 * trip to a worker. Every other query runs on the worker pool, so a long query still never stalls
 * other requests.
 */
import type { Database } from "bun:sqlite";
import { createStreamEncoder, ValueDoesNotFit, type StreamEncoder } from "../arrow/encode.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";
import { openReadOnly } from "./catalog.ts";

/** The most rows an inline read may touch (LIMIT + OFFSET). */
export const INLINE_MAX_ROWS = 1000;

export interface InlineResult {
  chunks: Uint8Array[];
  rows: number;
}

interface PreparedEncoder {
  encoder: StreamEncoder;
  schema: Uint8Array;
  end: Uint8Array;
}

export class InlineReader {
  private readonly db: Database;
  private readonly encoders = new WeakMap<ValidatedQuery, PreparedEncoder>();

  constructor(
    dbPath: string,
    private readonly maxRows: number,
  ) {
    // Exact integers, as in the workers (DESIGN.md §5).
    this.db = openReadOnly(dbPath, { safeIntegers: true });
  }

  eligible(query: ValidatedQuery): boolean {
    if (!query.table.hasRowid || query.filtered || query.ordered || query.limit === null) return false;
    return query.limit + (query.offset ?? 0) <= INLINE_MAX_ROWS && query.limit <= this.maxRows;
  }

  /**
   * The whole Arrow stream of an eligible query, or null when a stored value does not fit its
   * type: the worker path then reports it with its rowid.
   */
  read(query: ValidatedQuery): InlineResult | null {
    const stmt = this.db.query(query.sql);
    if (!stmt.readonly) return null;
    const rows = stmt.values();
    const { encoder, schema, end } = this.encoderFor(query);
    try {
      return { chunks: [schema, encoder.batchMessage(rows, 0), end], rows: rows.length };
    } catch (error) {
      if (error instanceof ValueDoesNotFit) return null;
      throw error;
    }
  }

  /** The encoder and the constant messages of a query, kept while its validation is cached. */
  private encoderFor(query: ValidatedQuery): PreparedEncoder {
    let prepared = this.encoders.get(query);
    if (!prepared) {
      const encoder = createStreamEncoder(query.columns.map((c) => ({ name: c.name, kind: c.column.kind, nullable: c.column.nullable })));
      prepared = { encoder, schema: encoder.schemaMessage(), end: encoder.endMessage() };
      this.encoders.set(query, prepared);
    }
    return prepared;
  }

  close(): void {
    this.db.close();
  }
}
