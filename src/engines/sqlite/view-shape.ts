/**
 * Whether a view only picks columns of one table — `SELECT columns FROM table`, nothing else — so
 * that reading n of its rows reads n rows of the table, as for the table itself (engine.ts `isSmall`).
 * Anything more (a filter, a join, grouping, DISTINCT, ORDER BY, LIMIT, expressions, WITH, UNION)
 * can make one row cost a pass over the table, and the view is read like any other query.
 */
import { parse, type Node } from "sql-parser-cst";
import { identifierName } from "../../sql/names.ts";

/** Select items that only name a column. */
const COLUMN_ITEMS = new Set(["identifier", "member_expr", "all_columns"]);

/** The one table a projection-only view reads, or null for any other view (or unparsable SQL). */
export function projectedTable(createViewSql: string): string | null {
  let statement: Node | undefined;
  try {
    statement = parse(createViewSql, { dialect: "sqlite" }).statements[0];
  } catch {
    return null;
  }
  if (statement?.type !== "create_view_stmt") return null;
  const body = statement.clauses.find((clause) => clause.type === "as_clause")?.expr;
  if (body?.type !== "select_stmt" || body.clauses.length !== 2) return null;
  const [select, from] = body.clauses;
  if (select?.type !== "select_clause" || from?.type !== "from_clause") return null;
  if (select.modifiers.length > 0 || from.expr.type !== "identifier") return null;
  const items = select.columns?.items ?? [];
  const onlyColumns = items.every((item) => COLUMN_ITEMS.has(item.type) || (item.type === "alias" && COLUMN_ITEMS.has(item.expr.type)));
  return items.length > 0 && onlyColumns ? identifierName(from.expr) : null;
}
