/**
 * SQL derived from a validated query through its table's rowid, always by adding fixed text to the
 * validated statement (nothing user-supplied):
 * - `rowidSql`: the rowid appended as the last output column, used only after a value failed to
 *   fit its Arrow type, to name the offending row (ARCHITECTURE.md §5);
 * - `rowidSpanSql`: max(rowid) − min(rowid) + 1, which bounds the rows of any query on the table;
 * - `rowidBoundsSql`, `rowidRangeSql`: a scan of the whole table, filtered or not, split by rowid
 *   ranges (engines/sqlite/striped.ts).
 */
import type { TableInfo } from "../../catalog.ts";
import type { ValidatedQuery } from "../../sql/validated.ts";
import { sameName } from "../../sql/names.ts";

/** SQLite's three names for the rowid; a real column of that name hides it, so try the next. */
const ROWID_NAMES = ["_rowid_", "rowid", "oid"] as const;

/** The table's rowid as a qualified name (a result alias cannot capture it), or null without one. */
function rowidOf(table: TableInfo): { qualified: string; name: string } | null {
  if (!table.hasRowid) return null;
  const name = ROWID_NAMES.find((n) => !table.columns.some((c) => sameName(c.name, n)));
  return name === undefined ? null : { qualified: `${quoted(table.name)}.${name}`, name };
}

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function rowidSql(q: ValidatedQuery): string | null {
  return withRowidColumn(q, q.sql);
}

/** `text` (the query's `sql` or `runSql`, which share the select list) with the rowid appended to it. */
function withRowidColumn(q: ValidatedQuery, text: string): string | null {
  const rowid = rowidOf(q.table);
  if (rowid === null) return null;
  const end = q.selectListEnd;
  return `${text.slice(0, end)}, ${rowid.name}${text.slice(end)}`;
}

/**
 * max(rowid) − min(rowid) + 1 of the query's table: rowids are distinct integers, and a query on
 * one table returns at most its rows, so this bounds the result. Each side is one b-tree lookup
 * (SQLite's min/max optimisation applies to a lone min() or max()). Null for views and WITHOUT
 * ROWID tables.
 */
export function rowidSpanSql(q: ValidatedQuery): string | null {
  const rowid = rowidOf(q.table);
  if (rowid === null) return null;
  const table = quoted(q.table.name);
  return `SELECT (SELECT max(${rowid.name}) FROM ${table}) - (SELECT min(${rowid.name}) FROM ${table}) + 1`;
}

/** `min(rowid), max(rowid)` of the query's table, one b-tree lookup each. */
export function rowidBoundsSql(q: ValidatedQuery): string | null {
  const rowid = rowidOf(q.table);
  if (rowid === null) return null;
  const table = quoted(q.table.name);
  return `SELECT (SELECT min(${rowid.name}) FROM ${table}), (SELECT max(${rowid.name}) FROM ${table})`;
}

/**
 * The bytes of text and blobs the query's columns hold in the first row at or after rowid `?1`
 * (`octet_length` reads the record's header, not the value), or null when it reads none: samples
 * of a table's row width, before its scan is split into ranges of rowids (engines/sqlite/stripe-plan.ts).
 */
export function rowWidthSql(q: ValidatedQuery): string | null {
  const rowid = rowidOf(q.table);
  const wide = q.columns.filter(({ column }) => column.kind === "utf8" || column.kind === "binary");
  if (rowid === null || wide.length === 0) return null;
  const bytes = wide.map(({ column }) => `coalesce(octet_length(${quoted(column.name)}), 0)`).join(" + ");
  return `SELECT ${bytes} FROM ${quoted(q.table.name)} WHERE ${rowid.name} >= ?1 ORDER BY ${rowid.name} LIMIT 1`;
}

/**
 * The query restricted to `?1 ≤ rowid ≤ ?2` (inclusive: a range ending at the largest rowid needs
 * no bound past 2^63 − 1), and the same with the rowid appended (`rowidSql`); only for a query
 * with no ORDER BY, LIMIT or OFFSET, whose text ends with its FROM table or its WHERE. The range
 * is added to the guarded text the workers run (`runSql`, engines/sqlite/guard.ts), whose WHERE expression
 * is already in parentheses, so `AND` binds to the whole of it. A WHERE that reads the clock is
 * not split: each range would be a statement of its own, with its own 'now'.
 */
export function rowidRangeSql(q: ValidatedQuery): { range: string; rangeWithRowid: () => string | null } | null {
  const rowid = rowidOf(q.table);
  if (rowid === null || q.ordered || q.limit !== null || q.offset !== null || q.readsClock) return null;
  const bounds = `${rowid.qualified} >= ?1 AND ${rowid.qualified} <= ?2`;
  const restrict = (text: string) => (q.filtered ? `${text} AND ${bounds}` : `${text} WHERE ${bounds}`);
  return {
    range: restrict(q.runSql),
    rangeWithRowid: () => {
      const withRowid = withRowidColumn(q, q.runSql);
      return withRowid === null ? null : restrict(withRowid);
    },
  };
}
