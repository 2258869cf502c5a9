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
import type { ColumnInfo, TableInfo } from "../../catalog.ts";
import type { TableConfig } from "../../config/types.ts";
import { BadRequestError, ClientGoneError, TooManyRowsError, ValueDoesNotFitError } from "../../errors.ts";
import type { OutputFormat } from "../../formats/registry.ts";
import { MAX_IN_FLIGHT } from "../../results/batches.ts";
import { ResultStream, ResultTooLarge, type QueryResult } from "../../results/result-stream.ts";
import { TimeBudget, timeLimitError } from "../../results/time-budget.ts";
import { bytesOfValues } from "../sqlite/protocol.ts";
import { encoderColumns, type ValidatedQuery } from "../../sql/validated.ts";
import type { Described, ReadOptions, StoredMisfit, TableEngine, TableSample } from "../engine.ts";
import { readPgColumns } from "./catalog.ts";
import { compileForPostgres, isRefusal, type PostgresQuery } from "./compile.ts";
import { countPgRows, openPgRead, type PgRead } from "./read.ts";
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

/** The kinds whose values are numbers, dates or booleans only (the select-list cap, sql/allowlist.ts). */
const NUMBER_KINDS = new Set(["int16", "int32", "int64", "float32", "float64", "decimal128", "bool", "date32", "timestamp_us", "timestamp_us_utc"]);

export class PostgresEngine implements TableEngine {
  readonly kind = "postgres" as const;
  private readonly sql: SQL;
  private readonly located = new WeakMap<TableConfig, Located>();
  private readonly compiled = new WeakMap<ValidatedQuery, PostgresQuery>();

  constructor(
    private readonly source: PostgresSource,
    private readonly limits: PostgresLimits,
  ) {
    this.sql = new SQL(source.url, { max: source.maxConnections, idleTimeout: 60, connectionTimeout: 10 });
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
      this.located.set(config, { schema, name, kind: read.kind, columns: read.columns });
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

  /** PostgreSQL says nothing cheap about whether data changed: nothing is kept. */
  dataVersion(): null {
    return null;
  }

  /** A fixed-price query runs only once its payment is verified. */
  isSmall(): boolean {
    return false;
  }

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
    const compiled = this.prepare(query);
    const located = this.located.get(query.table.config)!;
    const columns = query.statement.columns.map((output) => located.columns[output.column]!);
    const bounded = query.limit !== null && query.limit <= this.limits.maxRows;
    // A streamed result over max_rows is refused before any byte, from the count of the same snapshot.
    const count = options.streamed && !bounded;
    // Our deadline is the TimeBudget below (paused while the client holds the read back).
    const read = await openPgRead(this.sql, { select: compiled.select, columns, timeoutMs: this.limits.queryTimeoutMs, deadlineMs: Number.POSITIVE_INFINITY, count });
    if (read.count !== null && read.count > this.limits.maxRows) {
      await read.close();
      throw new TooManyRowsError(read.count, this.limits.maxRows);
    }
    return new CopyRead(read, query, format, options, this.limits).started;
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

/** One COPY read, encoded batch by batch into the response (results/result-stream.ts). */
class CopyRead extends ResultStream {
  private inFlight = 0;
  private creditBack: (() => void) | null = null;
  private stopped: Error | null = null;
  private readonly timer: TimeBudget;

  constructor(
    private readonly read: PgRead,
    private readonly query: ValidatedQuery,
    private readonly format: OutputFormat,
    private readonly options: ReadOptions,
    private readonly limits: PostgresLimits,
  ) {
    super(options.sending);
    this.timer = new TimeBudget(limits.queryTimeoutMs, () => this.stop(timeLimitError(limits.queryTimeoutMs)));
    this.timer.start();
    void this.pump();
  }

  private stop(error: Error): void {
    if (this.stopped !== null) return;
    this.stopped = error;
    this.creditBack?.();
    void this.read.close(error);
  }

  protected cancel(): void {
    this.stop(new ClientGoneError());
  }

  /** Pushes the bytes and waits while MAX_IN_FLIGHT chunks wait for the client (its time does not count). */
  private async send(bytes: Uint8Array, rows: number): Promise<void> {
    this.inFlight++;
    this.push([bytes], rows, () => {
      this.inFlight--;
      this.creditBack?.();
    });
    if (this.inFlight < MAX_IN_FLIGHT) return;
    this.timer.pause();
    this.startStreaming();
    while (this.inFlight >= MAX_IN_FLIGHT && this.stopped === null) await new Promise<void>((resolve) => (this.creditBack = resolve));
    this.creditBack = null;
    this.timer.resume();
  }

  private async pump(): Promise<void> {
    const encoder = this.format.create(encoderColumns(this.query));
    const maxBytes = this.options.maxBytes ?? Number.POSITIVE_INFINITY;
    let rows = 0;
    let valueBytes = 0;
    try {
      await this.send(encoder.head(), 0);
      for await (const batch of this.read.batches) {
        if (this.stopped !== null) break;
        rows += batch.rows.length;
        // A result read whole has no count first: the read finds the excess (as SQLite's does).
        if (rows > this.limits.maxRows) throw new TooManyRowsError(rows, this.limits.maxRows);
        for (const row of batch.rows) valueBytes += bytesOfValues(row);
        if (valueBytes > maxBytes) throw new ResultTooLarge("the values passed the transport's cap");
        await this.send(encoder.batch(batch.rows, batch.firstRowIndex), batch.rows.length);
      }
      if (this.stopped !== null) throw this.stopped;
      this.timer.stop();
      this.finish([encoder.end()], rows);
    } catch (error) {
      this.timer.stop();
      void this.read.close(error);
      this.fail(this.stopped ?? readError(error, this.query));
    }
  }
}

/** A value that does not fit names its table, column and row of the result (PostgreSQL has no rowid). */
function readError(error: unknown, query: ValidatedQuery): Error {
  if (error instanceof ValueDoesNotFit) {
    const column = query.columns[error.columnIndex]?.name ?? `#${error.columnIndex}`;
    return new ValueDoesNotFitError(query.table.name, column, null, `row ${error.rowIndex + 1} of the result: ${error.detail}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** The source named, without its URL (it may hold a password). */
function unreachable(source: PostgresSource, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `the PostgreSQL source '${source.name}' does not answer (${reason.replaceAll(source.url, "<url>")}): check databases.${source.name}.postgres and that the server is running and reachable`;
}
