/**
 * A validated query compiled for PostgreSQL with SQLite's meaning (DESIGN.md §14 "One dialect";
 * ARCHITECTURE.md §4): from the neutral statement (src/sql/statement.ts) and the columns' source
 * types, the SELECT to read (COPY (…) TO STDOUT: no bind parameters, literals inlined by
 * literals.ts) and the count of its rows; or a refusal naming the construct and the engine, for
 * a 400. What the compiled SQL relies on from the session: client_encoding UTF8 (text literals),
 * PostgreSQL 14 or later (EXTRACT returns numeric), pg_catalog first on the search_path (the
 * default); nothing from TimeZone, DateStyle, standard_conforming_strings, extra_float_digits or
 * the database's collation.
 *
 * Data the SQLite table could not hold has no SQLite meaning and is not checked here: NaN and
 * ±Infinity in float columns, dates outside years 0001–9999 or ±infinity, NUMERIC values with
 * more than 15 significant digits (SQLite keeps them as doubles).
 */
import type { Statement } from "../../sql/statement.ts";
import { postgresColumn, type PostgresColumn } from "./columns.ts";
import { compileExpression, type Scope } from "./expressions.ts";
import { compilingFor, dialect, POSTGRES, type Dialect } from "./dialect.ts";
import { quoteIdentifier } from "./literals.ts";
import { described, notAvailable, Refused } from "./refusal.ts";
import { condition } from "./values.ts";

export interface PostgresTable {
  /** Where the table is looked up (`databases.<name>.schema`, default public). */
  schema: string;
  /** The table's name in PostgreSQL (`tables[].source`, or its configured name). */
  name: string;
}

export interface PostgresQuery {
  /** The rows, in order, of the query's output columns: `COPY (<select>) TO STDOUT …`. */
  select: string;
  /** One row, one bigint column: how many rows `select` returns (its ORDER BY left out). */
  count: string;
  /**
   * The first construct whose PostgreSQL form can fail on some stored value where SQLite's would
   * not (an INTEGER sum beyond 64 bits is an error there, a REAL in SQLite), as a sentence; null
   * when none can. Like ValidatedQuery.failsOnData, refused on tables whose quotes tell nothing
   * about the data (DESIGN.md §17).
   */
  failsOnData: string | null;
}

export interface PostgresRefusal {
  /** A 400's message: "<construct> is not available on tables served from PostgreSQL[: …]". */
  refusal: string;
}

/** What compiling reads of a validated query: its statement, and the names of its table's columns. */
export interface CompilableQuery {
  statement: Statement;
  table: { columns: readonly { name: string }[] };
}

/**
 * `sourceTypes[i]` is the PostgreSQL type of `query.table.columns[i]` as format_type() prints it
 * ("bigint", "numeric(12,2)", "timestamp with time zone", …; the short names int8, float8,
 * timestamptz… are read too). `readAsText[i]`: the column is read as its text (types.ts: a type
 * the binary COPY decoder does not read), so the select list casts it.
 */
export function compileForPostgres(query: CompilableQuery, table: PostgresTable, sourceTypes: readonly string[], readAsText: readonly boolean[] = []): PostgresQuery | PostgresRefusal {
  const target: CompileTarget = {
    dialect: POSTGRES,
    column: postgresColumn,
    select: (index, name) => (readAsText[index] === true ? `${name}::text AS ${name}` : name),
  };
  return compileFor(target, query, () => `${quoteIdentifier(table.schema)}.${quoteIdentifier(table.name)}`, sourceTypes);
}

/** What a target engine brings to the compiler: its dialect, and how it reads its columns' types. */
export interface CompileTarget {
  dialect: Dialect;
  /** The column as the dialect sees it (columns.ts for PostgreSQL's types). */
  column(name: string, sourceType: string): PostgresColumn;
  /** The select-list expression that reads column `index` (its quoted name given) in the form the engine decodes. */
  select(index: number, quotedName: string): string;
}

/** The query compiled for `target` over the relation `from` writes (quoted SQL), or the refusal naming the construct and the engine. */
export function compileFor(target: CompileTarget, query: CompilableQuery, from: () => string, sourceTypes: readonly string[]): PostgresQuery | PostgresRefusal {
  return compilingFor(target.dialect, () => {
    try {
      return compile(target, query, from, sourceTypes);
    } catch (error) {
      if (error instanceof Refused) return { refusal: error.message };
      throw error;
    }
  });
}

export function isRefusal(compiled: PostgresQuery | PostgresRefusal): compiled is PostgresRefusal {
  return "refusal" in compiled;
}

function compile(target: CompileTarget, query: CompilableQuery, relation: () => string, sourceTypes: readonly string[]): PostgresQuery {
  const from = relation();
  const columns: PostgresColumn[] = query.table.columns.map((c, i) => {
    const type = sourceTypes[i];
    if (type === undefined) throw new Error(`no ${target.dialect.engine} type given for column ${i} ('${c.name}')`);
    return target.column(c.name, type);
  });
  const { statement } = query;
  const scope: Scope = { columns, failures: [] };
  const names = columns.map((c) => c.name);
  const where = statement.where === null ? "" : ` WHERE ${condition(compileExpression(statement.where, scope), `'${described(statement.where, names)}'`)}`;
  const order = statement.orderBy.map((term) => {
    const column = columns[term.column]!;
    if (column.class === null) {
      return notAvailable(`ORDER BY "${column.name}" (type ${column.sourceType})`, "SQLite has no counterpart of its order; sort on the client");
    }
    // SQLite's BINARY collation: UTF-8 bytes, i.e. code points; NULLs first ascending, last descending.
    const key = column.class === "text" ? dialect().binaryOrder(column.sql) : column.sql;
    const nulls = term.nulls ?? (term.descending ? "last" : "first");
    return `${key} ${term.descending ? "DESC" : "ASC"} NULLS ${nulls.toUpperCase()}`;
  });
  const limit = statement.limit === null ? "" : ` LIMIT ${statement.limit}${statement.offset === null ? "" : ` OFFSET ${statement.offset}`}`;
  const output = statement.columns
    .map((c) => target.select(c.column, quoteIdentifier(columns[c.column]!.name)))
    .join(", ");
  const select = `SELECT ${output} FROM ${from}${where}${order.length === 0 ? "" : ` ORDER BY ${order.join(", ")}`}${limit}`;
  // An order never changes how many rows there are, with LIMIT and OFFSET too.
  const count = limit === "" ? `SELECT count(*) FROM ${from}${where}` : `SELECT count(*) FROM (SELECT 1 FROM ${from}${where}${limit}) AS counted`;
  return { select, count, failsOnData: scope.failures[0] ?? null };
}
