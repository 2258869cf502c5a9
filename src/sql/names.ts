/**
 * Names in Simplified SQL (ARCHITECTURE.md §4): which identifier quoting is accepted, how names compare,
 * and how a column reference resolves against the queried table.
 */
import type { Identifier, MemberExpr } from "sql-parser-cst";
import type { ColumnInfo, TableInfo } from "../catalog.ts";
import { sameName } from "../identifiers.ts";
import { IDENTIFIER_QUOTES } from "./allowlist.ts";
import { refuse, shown, sourceOf } from "./refusals.ts";

/** What a clause is validated against: the one queried table and the query text (for messages). */
export interface Scope {
  table: TableInfo;
  sql: string;
  /** Set when the expression calls one of CLOCK_FUNCTIONS. */
  readsClock?: boolean;
}

export { foldCase, sameName } from "../identifiers.ts";

/** The identifier's name, after checking it is bare or double-quoted. */
export function identifierName(node: Identifier): string {
  const first = node.text.charAt(0);
  const quoted = first === "`" || first === "[" || first === "'" || first === '"';
  if (quoted && !(IDENTIFIER_QUOTES as readonly string[]).includes(first)) {
    refuse(`Identifier ${shown(node.text)} is quoted with ${first}: write it bare or in double quotes ("name")`);
  }
  // The parser reads `5abc` or `1ORid` as a name; SQLite refuses such tokens (or reads 1_000 as a number).
  if (/^[0-9]/.test(first)) {
    refuse(
      `Unexpected '${shown(node.text)}': numbers take no letters or '_' (write 1000, 1.5e3 or 0x1F) and a name that starts with a digit needs double quotes`,
    );
  }
  return node.name;
}

/**
 * Resolves a column reference. `table.column` is accepted when `table` names the queried table
 * (tools often qualify columns, and in a single-table query it cannot mean anything else);
 * `schema.table.column`, `table.*` and any other qualifier are refused.
 */
export function resolveColumn(node: Identifier | MemberExpr, scope: Scope): ColumnInfo {
  let columnNode: Identifier;
  if (node.type === "member_expr") {
    const { object, property } = node;
    if (property.type === "all_columns") {
      refuse(`'${sourceOf(node, scope.sql)}' is not supported: use '*' alone as the select list`);
    }
    if (object.type !== "identifier" || property.type !== "identifier") {
      refuse(`Schema-qualified name '${sourceOf(node, scope.sql)}' is not supported: write the column name alone`);
    }
    const qualifier = identifierName(object);
    if (!sameName(qualifier, scope.table.name)) {
      refuse(`Unknown table '${shown(qualifier)}' in '${sourceOf(node, scope.sql)}': only columns of '${scope.table.name}' can be referenced`);
    }
    columnNode = property;
  } else {
    columnNode = node;
  }
  const name = identifierName(columnNode);
  const column = scope.table.columns.find((c) => sameName(c.name, name));
  if (!column) {
    const hint = columnNode.text.startsWith('"') ? " (string literals take single quotes: 'text')" : "";
    refuse(`Unknown column '${shown(name)}' in table '${scope.table.name}'${hint}`);
  }
  return column;
}
