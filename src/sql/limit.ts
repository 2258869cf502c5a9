/**
 * LIMIT and OFFSET in Simplified SQL (ARCHITECTURE.md §4): non-negative decimal integer literals only,
 * small enough to be exact in JavaScript. `LIMIT offset, count` is refused (not normalised): which
 * number is which is a classic mistake, and `LIMIT count OFFSET offset` says it plainly.
 */
import type { LimitClause, Node } from "sql-parser-cst";
import { ALLOWED_NODES } from "./allowlist.ts";
import type { Scope } from "./names.ts";
import { refuse, refuseKnownConstruct, sourceOf } from "./refusals.ts";

export function readLimit(clause: LimitClause, scope: Scope): { limit: number; offset: number | null } {
  if (clause.offset && !clause.offsetKw) {
    refuse("LIMIT <offset>, <count> is not supported: write LIMIT <count> OFFSET <offset>");
  }
  if (clause.rowsExamined) refuse(`Unsupported LIMIT clause '${sourceOf(clause, scope.sql)}'`);
  if (!clause.count) refuse("LIMIT needs a row count, e.g. LIMIT 100");
  return {
    limit: readCount(clause.count, "LIMIT", scope),
    offset: clause.offset ? readCount(clause.offset, "OFFSET", scope) : null,
  };
}

function readCount(node: Node, keyword: string, scope: Scope): number {
  refuseKnownConstruct(node);
  const literal = (ALLOWED_NODES.limitValue as readonly string[]).includes(node.type) && "text" in node ? String(node.text) : "";
  if (!/^[0-9]+$/.test(literal)) {
    refuse(`${keyword} must be a non-negative integer literal (e.g. ${keyword} 100); got '${sourceOf(node, scope.sql)}'`);
  }
  const value = Number(literal);
  if (!Number.isSafeInteger(value)) refuse(`${keyword} ${literal} is too large: at most ${Number.MAX_SAFE_INTEGER}`);
  return value;
}
