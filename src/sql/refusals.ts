/**
 * How Simplified SQL explains a refusal (ARCHITECTURE.md §4, §8): a 400 with one line that names the
 * construct and says what to change. What is *allowed* lives in allowlist.ts; this file only words
 * the answers, so a construct missing here is still refused, just with a plainer message.
 */
import type { Node } from "sql-parser-cst";
import { BadRequestError } from "../errors.ts";
import { LIMITS } from "./allowlist.ts";

/** Known but refused operators, with the message naming them; any other unlisted operator is refused too. */
export const REJECTED_OPERATORS: Record<string, string> = {
  EXISTS: "EXISTS subqueries are not supported: query a single table",
  COLLATE: "COLLATE is not supported: use lower() or upper() for case-insensitive comparisons",
  MATCH: "MATCH is not supported: use LIKE or GLOB",
  REGEXP: "REGEXP is not supported: use LIKE or GLOB",
  "NOT MATCH": "MATCH is not supported: use LIKE or GLOB",
  "NOT REGEXP": "REGEXP is not supported: use LIKE or GLOB",
  "->": "JSON operators (->, ->>) are not supported",
  "->>": "JSON operators (->, ->>) are not supported",
  ISNULL: "ISNULL is not supported: use IS NULL",
  NOTNULL: "NOTNULL is not supported: use IS NOT NULL",
  "NOT NULL": "Postfix NOT NULL is not supported: use IS NOT NULL",
};

/** Known but refused constructs, by node type: the message names the construct and what to do. */
export const REJECTED_CONSTRUCTS: Record<string, string> = {
  select_stmt: "Subqueries are not supported: query a single table",
  compound_select_stmt: "Subqueries are not supported: query a single table",
  parameter: "Bound parameters (?, ?1, :name, @name, $name) are not supported: write values as literals",
  case_expr: "CASE is not supported: rewrite it with AND/OR, coalesce() or nullif()",
  join_expr: "JOIN is not supported: query a single table",
  with_clause: "WITH (common table expressions) is not supported: query a single table",
  group_by_clause: "GROUP BY is not supported: aggregate on the client",
  having_clause: "HAVING is not supported: filter with WHERE",
  window_clause: "WINDOW is not supported: window functions are not available",
  select_distinct: "DISTINCT is not supported: remove it and de-duplicate on the client",
  select_all: "SELECT ALL is not supported: remove ALL",
  all_columns: "'*' is only allowed alone as the whole select list",
  raise_expr: "RAISE is not supported",
  list_expr: "Row values are not supported: compare one column at a time",
};

export const TOO_DEEP =
  `Expression is nested deeper than ${LIMITS.maxExpressionDepth} levels: simplify the WHERE clause ` +
  "(a long chain of OR over one column can be written as IN (...))";

export function refuse(message: string): never {
  throw new BadRequestError(message);
}

/** Own keys only: a user-chosen name such as 'constructor' must not find Object.prototype members. */
export function lookup<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Refuses with the specific message when `node` is a construct known to be refused. */
export function refuseKnownConstruct(node: Node): void {
  const message = lookup(REJECTED_CONSTRUCTS, node.type);
  if (message !== undefined) refuse(message);
}

/** User-supplied text shown inside a message: control characters escaped (one line), long text cut. */
export function shown(text: string): string {
  const oneLine = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return oneLine.length > 60 ? `${oneLine.slice(0, 57)}...` : oneLine;
}

/** The query text a node was parsed from, for messages such as "Unsupported expression '...'". */
export function sourceOf(node: Node, sql: string): string {
  return node.range ? shown(sql.slice(node.range[0], node.range[1])) : node.type;
}
