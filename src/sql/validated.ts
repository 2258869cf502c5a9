/** What validation yields (dialect.ts): the query as the executor and the payment flow use it. */
import type { EncoderColumn } from "../arrow/encode.ts";
import type { ColumnInfo, TableInfo } from "../catalog.ts";
import type { Statement } from "./statement.ts";

export interface OutputColumn {
  /** The alias if given, else the column's name as stored in the table. */
  name: string;
  column: ColumnInfo;
}

export interface ValidatedQuery {
  table: TableInfo;
  /** The validated statement without a trailing ';', so it can be wrapped. */
  sql: string;
  /** What the query workers run: `sql` with its WHERE guarded, or a guard added when it sorts or skips without one, so that it can be stopped (guard.ts). */
  runSql: string;
  /**
   * What a count of the query wraps: `runSql` without its ORDER BY. An order never changes how many
   * rows there are (with LIMIT and OFFSET too), and a count that sorted would read and sort the
   * whole result first.
   */
  countedSql: string;
  /** `*` expands to all the table's columns in table order. */
  columns: OutputColumn[];
  limit: number | null;
  offset: number | null;
  /** Whether the query has a WHERE; `ordered`, an ORDER BY. Without either, SQLite reads only LIMIT + OFFSET rows. */
  filtered: boolean;
  ordered: boolean;
  /** Whether the WHERE calls a date/time function: its rows can change while the data does not. */
  readsClock: boolean;
  /**
   * The first construct of the WHERE that can fail on some stored value (sql/data-failures.ts), as a
   * sentence saying what to write instead; null when none can. Refused on tables whose quotes tell
   * nothing about the data (DESIGN.md §17).
   */
  failsOnData: string | null;
  /** Where the select list ends in `sql`: rowidSql appends the rowid there. */
  selectListEnd: number;
  /**
   * What the query means, engine-neutral (statement.ts, DESIGN.md §14): engines other than SQLite
   * compile it into their own SQL. Plain data: it crosses from the validation workers as it is.
   */
  statement: Statement;
}

/**
 * The result's columns as every output format's encoder takes them, whatever the engine: the
 * column's type whole (a decimal's precision and scale, a list's element type, arrow/types.ts).
 */
export function encoderColumns(query: ValidatedQuery): EncoderColumn[] {
  return query.columns.map(({ name, column: { kind, nullable, precision, scale, child } }) => ({
    name,
    kind,
    nullable,
    ...(precision === undefined ? {} : { precision, scale }),
    ...(child === undefined ? {} : { child }),
  }));
}
