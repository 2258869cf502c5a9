/**
 * SQL derived from a validated query through its table's rowid, always by adding fixed text to the
 * validated statement (nothing user-supplied):
 * - `rowidSql`: the rowid appended as the last output column, used only after a value failed to
 *   fit its Arrow type, to name the offending row (ARCHITECTURE.md §5);
 * - `rowidSpanSql`: max(rowid) − min(rowid) + 1, which bounds the rows of any query on the table.
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
