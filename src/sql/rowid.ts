/**
 * The validated query with the row's rowid added as the last output column: used only after a
 * value failed to fit its Arrow type, to name the offending row (DESIGN.md §5). Built from the
 * validated text by inserting a fixed name after the select list, nothing user-supplied.
 */
import type { ValidatedQuery } from "./dialect.ts";
import { sameName } from "./names.ts";
import { parseSelect } from "./parse.ts";

/** SQLite's three names for the rowid; a real column of that name hides it, so try the next. */
const ROWID_NAMES = ["_rowid_", "rowid", "oid"] as const;

export function rowidSql(q: ValidatedQuery): string | null {
  if (!q.table.hasRowid) return null;
  const name = ROWID_NAMES.find((n) => !q.table.columns.some((c) => sameName(c.name, n)));
  if (name === undefined) return null;
  const select = parseSelect(q.sql, Number.POSITIVE_INFINITY).clauses.find((c) => c.type === "select_clause");
  const end = select && select.type === "select_clause" ? select.columns?.range?.[1] : undefined;
  if (end === undefined) return null;
  return `${q.sql.slice(0, end)}, ${name}${q.sql.slice(end)}`;
}
