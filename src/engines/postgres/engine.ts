/**
 * The PostgreSQL engine (DESIGN.md §14): tables of one PostgreSQL database served with the dialect,
 * prices and limits of every table. Its catalog is read from pg_attribute (catalog.ts); a validated
 * query is compiled with SQLite's meaning or refused naming the construct (compile.ts); it is
 * counted and read in one REPEATABLE READ READ ONLY transaction with statement_timeout (read.ts),
 * as `COPY (SELECT …) TO STDOUT (FORMAT binary)` decoded into batches (copy-binary.ts), each batch
 * encoded in the buyer's format and handed into the engine-neutral ResultStream as the client (or
 * its spill file) takes them: a reader that stalls holds the COPY back, one that goes away (or the
 * time limit) cancels the statement on the server.
 */
import { SQL } from "bun";
import { ValueDoesNotFit } from "../../arrow/encode.ts";
import { arrowFrame, PulledRead, wholeResult } from "../pulled-read.ts";
import type { ColumnInfo, TableInfo } from "../../catalog.ts";
import type { TableConfig } from "../../config/types.ts";
import { BadRequestError, TooManyRowsError, ValueDoesNotFitError } from "../../errors.ts";
import type { OutputFormat } from "../../formats/registry.ts";
import { FIRST_RESPONSE_BYTES, FIRST_RESPONSE_ROWS } from "../../results/batches.ts";
import type { QueryResult } from "../../results/result-stream.ts";
import { encoderColumns, type ValidatedQuery } from "../../sql/validated.ts";
import type { Described, ReadOptions, StoredMisfit, TableEngine, TableSample } from "../engine.ts";
import { readPgColumns } from "./catalog.ts";
import { compileForPostgres, isRefusal, type PostgresQuery } from "./compile.ts";
import { countPgRows, openPgRead, readPgWhole, sessionSettings } from "./read.ts";
import { BinaryCopyDecoder, type DecodedBatch } from "./copy-binary.ts";
import { LruCache } from "../../sql/cache.ts";
import { quoteIdent, type DecodeColumn } from "./types.ts";
import type { EncoderColumn } from "../../arrow/encode.ts";
import { samplePgTable, scanPgTable, type PgRelation } from "./sample.ts";

export interface PostgresSource {
  /** The source's name in the config (databases:), for messages. */
  name: string;
  url: string;
  schema: string;
  maxConnections: number;
}

export interface PostgresLimits {
  maxRows: number;
  queryTimeoutMs: number;
}

/** What the engine keeps of a table it described: where it is, what it is, and its columns as PostgreSQL has them. */
type Located = PgRelation;

/**
 * What every read of a validated query needs, made once (a small query is read again and again,
 * its text validated once: sql/validator.ts): its SELECT and the small read's, its columns as
 * decoded and as encoded, and the decoders of its finished small reads. A query's columns never
 * change; a reload that changes a table validates its texts anew, into new queries and new plans.
 */
interface ReadPlan {
  select: string;
  /** The small read's SELECT: at most one row more than a response's first part (readWhole). */
  wholeSelect: string;
  columns: DecodeColumn[];
  arrow: EncoderColumn[];
  /** Decoders of small Arrow reads that ended (BinaryCopyDecoder.reset), at most max_connections. */
  idle: BinaryCopyDecoder[];
  query: ValidatedQuery;
}

/** Read plans kept; with at most max_connections decoders each, of at most KEPT_DECODER_BYTES. */
const KEPT_PLANS = 64;
/** A decoder whose column buffers grew past this (a wide result) is not kept. */
const KEPT_DECODER_BYTES = 16 * 1024;

/** The kinds whose values are numbers, dates or booleans only (the select-list cap, sql/allowlist.ts). */
const NUMBER_KINDS = new Set(["int16", "int32", "int64", "float32", "float64", "decimal128", "bool", "date32", "timestamp_us", "timestamp_us_utc"]);

export class PostgresEngine implements TableEngine {
  readonly kind = "postgres" as const;
  private readonly sql: SQL;
  private readonly located = new WeakMap<TableConfig, Located>();
  private readonly compiled = new WeakMap<ValidatedQuery, PostgresQuery>();
  /** Read plans of the queries read most recently (a bounded number: each may keep decoders). */
  private readonly plans = new LruCache<ValidatedQuery, ReadPlan>(KEPT_PLANS);

  constructor(
    private readonly source: PostgresSource,
    private readonly limits: PostgresLimits,
  ) {
    // Every connection starts with the reads' settings (read.ts sessionSettings), so a read without
    // a count is one statement: the COPY alone (ARCHITECTURE.md §9 "The PostgreSQL engine").
    this.sql = new SQL(source.url, { max: source.maxConnections, idleTimeout: 60, connectionTimeout: 10, connection: sessionSettings(limits.queryTimeoutMs) });
  }

  async describe(tables: readonly { config: TableConfig; index: number }[]): Promise<Described> {
    const described: TableInfo[] = [];
    const problems: string[] = [];
    for (const { config, index } of tables) {
      const { schema, name } = this.whereIs(config);
      const read = await readPgColumns(this.sql, schema, name).catch((error: unknown) => ({ ok: false as const, problem: unreachable(this.source, error) }));
      if (!read.ok) {
        problems.push(`tables[${index}].${config.source === config.name ? "name" : "source"}: ${read.problem}`);
        continue;
      }
      const columns: ColumnInfo[] = read.columns.map((column) => ({
        name: column.name,
        declaredType: column.sourceType,
        nullable: column.nullable,
        ...column.type,
        rowidAlias: false,
        numbersOnly: NUMBER_KINDS.has(column.type.kind),
        description: config.columns[column.name],
      }));
      for (const key of Object.keys(config.columns)) {
        if (!columns.some((c) => c.name === key)) problems.push(`tables[${index}].columns.${key}: no column '${key}' in ${schema}.${name}`);
      }
      this.located.set(config, { schema, name, kind: read.kind, columns: read.columns, key: read.key });
      // No HTTP-thread reads here (isSmall is false): a LIMIT's bound matters to nobody else.
      described.push({ name: config.name, columns, hasRowid: false, limitBounded: read.kind === "table", engine: "postgres", config });
    }
    return { tables: described, problems };
  }

  /** `source:` as `schema.table` or `table` (looked up in the source's schema). */
  private whereIs(config: TableConfig): { schema: string; name: string } {
    const dot = config.source.indexOf(".");
    return dot < 0 ? { schema: this.source.schema, name: config.source } : { schema: config.source.slice(0, dot), name: config.source.slice(dot + 1) };
  }

  async ping(): Promise<void> {
    try {
      await this.sql`SELECT 1`;
    } catch (error) {
      throw new Error(unreachable(this.source, error));
    }
  }

  // No dataVersion, isSmall or readNow (engine.ts): PostgreSQL says nothing cheap about whether data
  // changed, so nothing is kept; nothing is read on the HTTP thread, and a fixed-price query runs
  // only once its payment is verified.

  /** The query as PostgreSQL runs it, or the 400 naming what it cannot run with SQLite's meaning. */
  prepare(query: ValidatedQuery): PostgresQuery {
    const kept = this.compiled.get(query);
    if (kept !== undefined) return kept;
    const located = this.located.get(query.table.config);
    if (located === undefined) throw new Error(`table '${query.table.name}' was not described by the engine of '${this.source.name}'`);
    const compiled = compileForPostgres(query, located, located.columns.map((column) => column.sourceType), located.columns.map((column) => column.asText));
    if (isRefusal(compiled)) throw new BadRequestError(compiled.refusal);
    this.compiled.set(query, compiled);
    return compiled;
  }

  check(query: ValidatedQuery): { failsOnData: string | null } {
    return { failsOnData: query.failsOnData ?? this.prepare(query).failsOnData };
  }

  async count(query: ValidatedQuery): Promise<number> {
    const compiled = this.prepare(query);
    return countPgRows(this.sql, compiled.count, this.limits.queryTimeoutMs);
  }

  async read(query: ValidatedQuery, format: OutputFormat, options: ReadOptions): Promise<QueryResult> {
    const plan = this.planOf(query);
    const located = this.located.get(query.table.config)!;
    const bounded = query.limit !== null && query.limit <= this.limits.maxRows;
    // A streamed result over max_rows is refused before any byte, from the count of the same snapshot.
    const count = options.streamed && !bounded;
    // Our deadline is the TimeBudget below (paused while the client holds the read back).
    // An Arrow answer without a cap on its values' bytes takes the COPY's bytes straight into Arrow
    // buffers (copy-arrow.ts); a capped one counts its values as every engine does (bytesOfValues).
    const arrow = format.name === "arrow" && options.maxBytes === null ? plan.arrow : undefined;
    const base = { columns: plan.columns, timeoutMs: this.limits.queryTimeoutMs, arrow, inSession: true };
    const started = performance.now();
    if (count) {
      // Most answers fit in a response's first part: read at most that much, as one statement, and
      // when the rows end there their number is known without a count (nothing is sent before).
      const whole = await this.readWhole(plan, base);
      if (whole !== null) {
        const rows = whole.reduce((sum, batch) => sum + batch.length, 0);
        if (rows > this.limits.maxRows) throw new TooManyRowsError(rows, this.limits.maxRows);
        // Nothing left to pull: the answer is complete (one buffer), not a stream (pulled-read.ts wholeResult).
        return wholeResult(whole, query, format, options);
      }
    }
    // A table's integer key bounds its rows: within max_rows, no count (SQLite's rowid span, lanes.ts).
    const bound = located.key == null ? undefined : { sql: keySpanSql(located), within: this.limits.maxRows };
    const read = await openPgRead(this.sql, { ...base, select: plan.select, deadlineMs: Number.POSITIVE_INFINITY, count, bound });
    if (read.count !== null && read.count > this.limits.maxRows) {
      await read.close();
      throw new TooManyRowsError(read.count, this.limits.maxRows);
    }
    return new PulledRead(read, query, format, options, this.limits, started).started;
  }

  /** The query's read plan, made on its first read (see ReadPlan). */
  private planOf(query: ValidatedQuery): ReadPlan {
    let plan = this.plans.get(query);
    if (plan === undefined) {
      const select = this.prepare(query).select;
      const located = this.located.get(query.table.config)!;
      plan = {
        select,
        wholeSelect: `SELECT * FROM (${select}) AS whole LIMIT ${FIRST_RESPONSE_ROWS + 1}`,
        columns: query.statement.columns.map((output) => located.columns[output.column]!),
        arrow: encoderColumns(query),
        idle: [],
        query,
      };
      this.plans.set(query, plan);
    }
    return plan;
  }

  /**
   * The whole result when it holds at most what a response's first part holds (FIRST_RESPONSE_ROWS
   * rows, FIRST_RESPONSE_BYTES of text and blobs), read as one COPY of at most one row more; null
   * when there is more (the read then counts first, in its own snapshot).
   */
  private async readWhole(plan: ReadPlan, base: { columns: DecodeColumn[]; timeoutMs: number; arrow: EncoderColumn[] | undefined; inSession: boolean }): Promise<DecodedBatch[] | null> {
    // A decoder of a finished small read of this query is used again (its column buffers with it).
    // An Arrow answer of one batch comes out whole, between the query's schema message and end marker.
    const decoder = (base.arrow === undefined ? undefined : plan.idle.pop()) ?? new BinaryCopyDecoder(base.columns, base.arrow === undefined ? base : { ...base, frame: arrowFrame(plan.query) });
    // Under the query time limit as a whole: nothing is sent meanwhile.
    let rows = 0;
    let bytes = 0;
    const batches = await readPgWhole(this.sql, {
      select: plan.wholeSelect,
      timeoutMs: base.timeoutMs,
      decoder,
      // Wide rows: stop reading (the statement is cancelled) once past what a first part holds.
      enough: (batch) => (rows += batch.length) > FIRST_RESPONSE_ROWS || (bytes += batch.wideBytes) > FIRST_RESPONSE_BYTES,
    });
    // Only a decoder that read its stream to the end, with small buffers, is kept (reset).
    if (base.arrow !== undefined && plan.idle.length < this.source.maxConnections && decoder.reset(KEPT_DECODER_BYTES)) plan.idle.push(decoder);
    return batches;
  }

  /** A dashboard's sample (sample.ts), under the query time limit; a refused value names its column. */
  async sample(table: TableInfo, cap: number, along: string | null): Promise<TableSample> {
    try {
      return await samplePgTable(this.sql, this.relationOf(table), cap, along, this.limits.queryTimeoutMs);
    } catch (error) {
      if (!(error instanceof ValueDoesNotFit)) throw error;
      const column = table.columns[error.columnIndex]?.name ?? `#${error.columnIndex}`;
      throw new ValueDoesNotFitError(table.name, column, null, `row ${error.rowIndex + 1} of the sample: ${error.detail}`);
    }
  }

  /** `arrow402 validate`'s read of every row (sample.ts). */
  scan(table: TableInfo, misfit: (found: StoredMisfit) => void): Promise<{ rows: number }> {
    return scanPgTable(this.sql, this.relationOf(table), misfit);
  }

  private relationOf(table: TableInfo): Located {
    const located = this.located.get(table.config);
    if (located === undefined) throw new Error(`table '${table.name}' was not described by the engine of '${this.source.name}'`);
    return located;
  }

  close(): void {
    void this.sql.close();
  }
}

/** max(key) − min(key) + 1 of the table as text (numeric: no int8 overflow), NULL when empty; each side one index lookup. */
function keySpanSql(located: Located): string {
  const key = quoteIdent(located.key!);
  return `SELECT (max(${key})::numeric - min(${key})::numeric + 1)::text AS span FROM ${quoteIdent(located.schema)}.${quoteIdent(located.name)}`;
}

/** The source named, without its URL (it may hold a password). */
function unreachable(source: PostgresSource, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `the PostgreSQL source '${source.name}' does not answer (${reason.replaceAll(source.url, "<url>")}): check databases.${source.name}.postgres and that the server is running and reachable`;
}
