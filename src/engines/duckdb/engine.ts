/**
 * The DuckDB engine (DESIGN.md §14): tables of a DuckDB file opened read-only, and tables served
 * from Parquet, CSV or NDJSON files, with the dialect, prices and limits of every table. The source
 * is opened once and locked down (database.ts: no file but the configured ones can be read); its
 * catalog is information_schema (catalog.ts); a validated query is compiled with SQLite's meaning
 * by the compiler PostgreSQL uses, in DuckDB's dialect (dialect.ts), or refused naming the
 * construct; it is counted and read in one transaction on a connection of its own (read.ts), its
 * chunks encoded batch by batch as the client pulls them (pulled-read.ts), interrupted in DuckDB
 * at the deadline or when the client goes away.
 */
import type { DuckDBInstance } from "@duckdb/node-api";
import { ValueDoesNotFit } from "../../arrow/encode.ts";
import type { ColumnInfo, TableInfo } from "../../catalog.ts";
import type { TableConfig } from "../../config/types.ts";
import { BadRequestError, TooManyRowsError, ValueDoesNotFitError } from "../../errors.ts";
import type { OutputFormat } from "../../formats/registry.ts";
import type { QueryResult } from "../../results/result-stream.ts";
import { encoderColumns, type ValidatedQuery } from "../../sql/validated.ts";
import type { Described, ReadOptions, StoredMisfit, TableEngine, TableSample } from "../engine.ts";
import { compileFor, isRefusal, type PostgresQuery } from "../postgres/compile.ts";
import { PulledRead } from "../pulled-read.ts";
import { isBaseTable, readDuckColumns } from "./catalog.ts";
import { firstLine, openDuckDB, relationOf, relationSql, type DuckSettings, type OpenedDuckDB } from "./database.ts";
import { DUCKDB_DIALECT } from "./dialect.ts";
import { openDuckRead, queryValue } from "./read.ts";
import { sampleDuckTable, scanDuckTable, type DuckRelation } from "./sample.ts";
import { duckColumn, selectExpression } from "./types.ts";

export interface DuckSource {
  /** The source's name in the config (databases:), for messages. */
  name: string;
  /** The DuckDB file, or ":memory:". */
  path: string;
  /** The source's tables in the config (their files: become views when the source opens). */
  tables: readonly TableConfig[];
  settings: DuckSettings;
}

export interface DuckLimits {
  maxRows: number;
  queryTimeoutMs: number;
}

/** The kinds whose values are numbers, dates or booleans only (the select-list cap, sql/allowlist.ts). */
const NUMBER_KINDS = new Set(["int16", "int32", "int64", "float32", "float64", "decimal128", "bool", "date32", "timestamp_us", "timestamp_us_utc"]);

export class DuckDBEngine implements TableEngine {
  readonly kind = "duckdb" as const;
  private readonly opened: Promise<OpenedDuckDB>;
  private instance: DuckDBInstance | null = null;
  private closed = false;
  private readonly located = new WeakMap<TableConfig, DuckRelation>();
  private readonly compiled = new WeakMap<ValidatedQuery, PostgresQuery>();
  /** The files each file-backed table's view reads (by lower-case name), as the source was opened. */
  private readonly openedFiles: Map<string, string>;

  constructor(
    private readonly source: DuckSource,
    private readonly limits: DuckLimits,
  ) {
    this.openedFiles = new Map(source.tables.flatMap((table) => (table.files === undefined ? [] : [[table.name.toLowerCase(), JSON.stringify(table.files.paths)]])));
    this.opened = openDuckDB(source.path, source.tables, source.settings).then((opened) => {
      if (this.closed) opened.instance.closeSync();
      else this.instance = opened.instance;
      return opened;
    });
    // Failures are reported by describe() and ping(); none is unhandled meanwhile.
    this.opened.catch(() => {});
  }

  private async ready(): Promise<{ instance: DuckDBInstance; opened: OpenedDuckDB }> {
    let opened: OpenedDuckDB;
    try {
      opened = await this.opened;
    } catch (error) {
      throw new Error(this.unopened(error));
    }
    if (this.instance === null) throw new Error(`the DuckDB source '${this.source.name}' is closed`);
    return { instance: this.instance, opened };
  }

  private unopened(error: unknown): string {
    return `the DuckDB source '${this.source.name}' cannot be opened (${firstLine(error)}): check databases.${this.source.name}.duckdb, a DuckDB database file`;
  }

  async describe(tables: readonly { config: TableConfig; index: number }[]): Promise<Described> {
    let ready: { instance: DuckDBInstance; opened: OpenedDuckDB };
    try {
      ready = await this.ready();
    } catch (error) {
      return { tables: [], problems: [`databases.${this.source.name}.duckdb: ${(error as Error).message}`] };
    }
    const described: TableInfo[] = [];
    const problems: string[] = [];
    for (const { config, index } of tables) {
      if (config.files !== undefined && this.openedFiles.get(config.name.toLowerCase()) !== JSON.stringify(config.files.paths)) {
        // A reload: the views were made when the source opened, over the files matched then.
        problems.push(`tables[${index}].files: the files of a DuckDB source's tables are opened when arrow402 starts; restart it to serve ${config.files.pattern}`);
        continue;
      }
      const viewProblem = [...ready.opened.viewProblems].find(([table]) => table.name === config.name)?.[1];
      if (viewProblem !== undefined) {
        problems.push(`tables[${index}].files: DuckDB cannot read ${config.files!.pattern} as ${config.files!.format} (${viewProblem}); check the files`);
        continue;
      }
      const relation = relationOf(config);
      const read = await readDuckColumns(ready.instance, relation);
      if (read.length === 0) {
        problems.push(`tables[${index}].${config.source === config.name ? "name" : "source"}: no table or view ${relation.schema}.${relation.name} in the DuckDB file of '${this.source.name}'`);
        continue;
      }
      const columns: ColumnInfo[] = read.map((column) => ({
        name: column.name,
        declaredType: column.sourceType,
        nullable: column.nullable,
        ...column.type,
        rowidAlias: false,
        numbersOnly: NUMBER_KINDS.has(column.type.kind),
        description: config.columns[column.name],
      }));
      for (const key of Object.keys(config.columns)) {
        if (!columns.some((c) => c.name === key)) problems.push(`tables[${index}].columns.${key}: no column '${key}' in ${config.files === undefined ? `${relation.schema}.${relation.name}` : "its files"}`);
      }
      this.located.set(config, { sql: relationSql(relation), columns: read });
      // A LIMIT reads at most its rows of a table or of files; a view of the file may read anything.
      described.push({ name: config.name, columns, hasRowid: false, limitBounded: config.files !== undefined || (await isBaseTable(ready.instance, relation)), engine: "duckdb", config });
    }
    return { tables: described, problems };
  }

  async ping(): Promise<void> {
    const { instance } = await this.ready();
    await queryValue(instance, "SELECT 1", this.limits.queryTimeoutMs);
  }

  // No dataVersion, isSmall or readNow (engine.ts): the source is read-only, but its files can be
  // replaced underneath, so nothing is kept; nothing is read on the HTTP thread.

  /** The query as DuckDB runs it, or the 400 naming what it cannot run with SQLite's meaning. */
  prepare(query: ValidatedQuery): PostgresQuery {
    const kept = this.compiled.get(query);
    if (kept !== undefined) return kept;
    const relation = this.relationOf(query.table);
    const compiled = compileFor(
      { dialect: DUCKDB_DIALECT, column: (name, type) => duckColumn(name, type, query.table.config.files === undefined), select: (index) => selectExpression(relation.columns[index]!.name, relation.columns[index]!) },
      query,
      () => relation.sql,
      relation.columns.map((column) => column.sourceType),
    );
    if (isRefusal(compiled)) throw new BadRequestError(compiled.refusal);
    this.compiled.set(query, compiled);
    return compiled;
  }

  check(query: ValidatedQuery): { failsOnData: string | null } {
    return { failsOnData: query.failsOnData ?? this.prepare(query).failsOnData };
  }

  async count(query: ValidatedQuery): Promise<number> {
    const compiled = this.prepare(query);
    const { instance } = await this.ready();
    return Number(await queryValue(instance, compiled.count, this.limits.queryTimeoutMs, this.outOfMemory));
  }

  async read(query: ValidatedQuery, format: OutputFormat, options: ReadOptions): Promise<QueryResult> {
    const compiled = this.prepare(query);
    const relation = this.relationOf(query.table);
    const { instance } = await this.ready();
    const bounded = query.limit !== null && query.limit <= this.limits.maxRows;
    // A streamed result over max_rows is refused before any byte, from the count of the same transaction.
    const count = options.streamed && !bounded ? compiled.count : null;
    const types = query.statement.columns.map((output) => relation.columns[output.column]!.type);
    // An Arrow answer whose values are not counted (the transport's cap) is encoded from DuckDB's
    // vectors (arrow-chunks.ts); a capped one counts its values as every engine does (bytesOfValues).
    const arrow = format.name === "arrow" && options.maxBytes === null ? encoderColumns(query) : undefined;
    const read = await openDuckRead(instance, { select: compiled.select, types, count, timeoutMs: this.limits.queryTimeoutMs, arrow, outOfMemory: this.outOfMemory });
    if (read.count !== null && read.count > this.limits.maxRows) {
      await read.close();
      throw new TooManyRowsError(read.count, this.limits.maxRows);
    }
    return new PulledRead(read, query, format, options, this.limits).started;
  }

  async sample(table: TableInfo, cap: number, along: string | null): Promise<TableSample> {
    const { instance } = await this.ready();
    try {
      return await sampleDuckTable(instance, this.relationOf(table), cap, along, this.limits.queryTimeoutMs);
    } catch (error) {
      if (!(error instanceof ValueDoesNotFit)) throw error;
      const column = table.columns[error.columnIndex]?.name ?? `#${error.columnIndex}`;
      throw new ValueDoesNotFitError(table.name, column, null, `row ${error.rowIndex + 1} of the sample: ${error.detail}`);
    }
  }

  async scan(table: TableInfo, misfit: (found: StoredMisfit) => void): Promise<{ rows: number }> {
    const { instance } = await this.ready();
    return scanDuckTable(instance, this.relationOf(table), misfit);
  }

  /**
   * A query that found no room within the source's memory_limit: the query's doing, as the time
   * limit is (a 400 that says what to change; on a sealed table, the one answer after payment).
   */
  private readonly outOfMemory = () =>
    new BadRequestError(
      `The query needed more memory than the DuckDB source '${this.source.name}' allows (databases.${this.source.name}.memory_limit_mb: ${this.source.settings.memoryLimitMb} MiB, ` +
        "shared by the queries running on it at once) and was stopped: add a WHERE condition or a smaller LIMIT (sorting many rows takes the most memory), or retry when fewer queries run",
    );

  private relationOf(table: { name: string; config: TableConfig }): DuckRelation {
    const located = this.located.get(table.config);
    if (located === undefined) throw new Error(`table '${table.name}' was not described by the engine of '${this.source.name}'`);
    return located;
  }

  close(): void {
    this.closed = true;
    this.instance?.closeSync();
    this.instance = null;
  }
}
