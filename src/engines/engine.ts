/**
 * The table engine seam (DESIGN.md §9, §14; ARCHITECTURE.md §9): a source of tables (SQLite, and
 * next PostgreSQL and DuckDB) behind one interface, as ROAPI has one loader per source behind one
 * context. An engine counts and reads validated queries on its own connections or workers, under
 * its own time limit, and hands back encoded results; everything after that — waiting for slow
 * clients (spill files), paid results held until settlement, the unsent-bytes budget, kept results,
 * formats' registry, compression, MCP — is engine-neutral (src/results/, src/routes/, src/mcp/).
 * A new engine is a folder under src/engines/ implementing this; nothing else branches on it.
 */
import type { TableInfo } from "../catalog.ts";
import type { TableConfig } from "../config/types.ts";
import type { OutputFormat } from "../formats/registry.ts";
import type { SendingOptions } from "../results/outgoing.ts";
import type { QueryResult } from "../results/result-stream.ts";
import type { ValidatedQuery } from "../sql/validated.ts";

export type EngineKind = "sqlite" | "postgres" | "duckdb";

export interface ReadOptions {
  /**
   * Streamed to its client as it is read: a result over `limits.max_rows` is refused before any
   * byte is sent (counted first unless a LIMIT bounds it). False for a result read whole before
   * it is answered (a paid answer held until settlement, a transport's capped answer): then one
   * reader reads it, in order, so that the same rows always encode to the same bytes (the digest
   * a replay is compared by, DESIGN.md §17).
   */
  streamed: boolean;
  /** A transport's cap on the values read, in bytes (MCP), or null; past it the read stops (ResultTooLarge). */
  maxBytes: number | null;
  /** How the result's bytes wait for a client that reads slowly (results/outgoing.ts). */
  sending: SendingOptions;
}

/**
 * A capped sample of a table (DESIGN.md §7, §14: the dashboards' snapshots sample any engine), read
 * in one snapshot of the source.
 */
export interface TableSample {
  /**
   * Values in column order, as the encoders take them (COLUMN-TYPES: int16/int32 numbers, int64
   * and the µs timestamps bigints, decimal128 the unscaled bigint, list an array, SQLite's own
   * text and numbers as stored); every one fits its column's type. With a column to spread along:
   * most recent first; otherwise in the table's order.
   */
  rows: unknown[][];
  /** Rows in the whole table, counted in the same snapshot. */
  totalRows: number;
  /** True when `rows` are an even sample (first and last included) rather than the whole table. */
  sampled: boolean;
}

/** A stored value its column's type cannot hold, found by `scan` (`arrow402 validate`). */
export interface StoredMisfit {
  /** The column's index in the table's columns. */
  column: number;
  /** Where the row is, in the source's terms: "rowid 17", "row 3 (ctid (0,3))". */
  row: string;
  /** Why the value does not fit; it may show the value (for the operator only). */
  detail: string;
}

/** The configured tables an engine serves, as it has them. */
export interface Described {
  /** In the order given. */
  tables: TableInfo[];
  /** One line per table or column that is not there, with its config path. */
  problems: string[];
}

export interface TableEngine {
  readonly kind: EngineKind;
  /**
   * Reads the tables (`tables[i]` of the config is `index`) as the source has them: columns, their
   * Arrow types and nullability; every one missing is a problem naming its config path.
   */
  describe(tables: readonly { config: TableConfig; index: number }[]): Promise<Described>;
  /** Resolves when the source answers (readiness); rejects with what is wrong, without secrets. */
  ping(): Promise<void>;
  /**
   * A value that changes whenever committed data may have changed, read where small reads read;
   * results are kept under it (results/result-cache.ts). Null: not known now, nothing is kept;
   * absent (an engine that reads only on its own connections): never known, nothing is ever kept.
   */
  dataVersion?(): bigint | null;
  /**
   * What the engine makes of a validated query, before any price or payment (DESIGN.md §14, §17):
   * throws a BadRequestError naming the construct and the engine when it cannot run it with the
   * dialect's meaning; otherwise says what in it can fail on some stored value (null: nothing).
   */
  check(query: ValidatedQuery): { failsOnData: string | null };
  /**
   * Whether a read of the query is provably small, whatever the data (a fixed-price one may run
   * while /verify is in flight). Absent: none is; a query runs only once its payment is verified.
   */
  isSmall?(query: ValidatedQuery): boolean;
  /** The number of rows the query returns, without reading them out (an engine may keep counts while its data is unchanged). */
  count(query: ValidatedQuery): Promise<number>;
  /**
   * The whole result read now, on this thread, when the engine can do that cheaply (small reads);
   * null otherwise. Absent: nothing is read on the HTTP thread.
   */
  readNow?(query: ValidatedQuery, format: OutputFormat): { chunks: Uint8Array[]; rows: number } | null;
  /**
   * Reads the result encoded in `format`. Resolves once the response can start: with the whole
   * result when it ended first, else with a body its client pulls (a client that stops reading
   * holds the read back; one that goes away stops it). Rejects with the error classes of
   * errors.ts (a query error or the time limit: 400; a value that does not fit: 500).
   */
  read(query: ValidatedQuery, format: OutputFormat, options: ReadOptions): Promise<QueryResult>;
  /**
   * At most `cap` rows of a described table, for a dashboard's snapshot (ARCHITECTURE.md §7): the whole
   * table when it has no more, else `cap` rows spread evenly along the column `along` (a time
   * column: the sample covers its whole range), or along the table's own order when null. Read
   * under the engine's time limit. Rejects with ValueDoesNotFitError for a value that does not fit.
   */
  sample(table: TableInfo, cap: number, along: string | null): Promise<TableSample>;
  /**
   * Reads every stored value of a described table as queries read them (`arrow402 validate`, DESIGN.md §14),
   * without the query time limit, and calls `misfit` for each one its column's type cannot hold.
   * Resolves with the number of rows read; rejects when the source cannot be read.
   */
  scan(table: TableInfo, misfit: (found: StoredMisfit) => void): Promise<{ rows: number }>;
  close(): void;
}
