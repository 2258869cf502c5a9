/**
 * ORDER BY in Simplified SQL (ARCHITECTURE.md §4): `(column | alias) [ASC|DESC] [NULLS FIRST|NULLS LAST]`,
 * comma-separated. Positions (`ORDER BY 1`), expressions and COLLATE are refused.
 */
import type { Node, OrderByClause } from "sql-parser-cst";
import type { ColumnInfo } from "../catalog.ts";
import { ALLOWED_NODES } from "./allowlist.ts";
import type { OutputColumn } from "./validated.ts";
import type { OrderTerm } from "./statement.ts";
import { operatorName } from "./expression.ts";
import { identifierName, resolveColumn, sameName, type Scope } from "./names.ts";
import { lookup, REJECTED_OPERATORS, refuse, refuseKnownConstruct, sourceOf } from "./refusals.ts";

const allowed = (list: readonly string[], node: Node) => list.includes(node.type);

/** Returns the terms as the neutral statement holds them (statement.ts), each on its table column. */
export function checkOrderBy(order: OrderByClause, output: OutputColumn[], scope: Scope): OrderTerm[] {
  if (order.withRollupKw) refuse("WITH ROLLUP is not supported");
  // A column sorted by again changes nothing, but SQLite copies its value into the sort record once
  // per term: ORDER BY a 1 MB text 1,000 times built a 1 GB record for every row. Terms are
  // compared as the catalog columns they resolve to, not by name: "É" and "é" are two columns.
  const sortedBy = new Set<ColumnInfo>();
  const terms: OrderTerm[] = [];
  let descending = false;
  let nulls: OrderTerm["nulls"] = null;
  const once = (column: ColumnInfo) => {
    if (sortedBy.has(column)) refuse(`ORDER BY sorts by column '${column.name}' twice: a second term on the same column changes nothing; remove it`);
    sortedBy.add(column);
    terms.push({ column: scope.table.columns.indexOf(column), descending, nulls });
  };
  for (const item of order.specifications.items) {
    refuseKnownConstruct(item);
    if (!allowed(ALLOWED_NODES.orderItem, item)) refuseOrderTerm(item, scope);
    let expr: Node = item;
    descending = false;
    nulls = null;
    if (item.type === "sort_specification") {
      if (item.direction && !allowed(ALLOWED_NODES.sortDirection, item.direction)) {
        refuse(`Unsupported sort direction in '${sourceOf(item, scope.sql)}': use ASC or DESC`);
      }
      descending = item.direction?.type === "sort_direction_desc";
      if (item.nullHandlingKw) nulls = item.nullHandlingKw[1].name === "FIRST" ? "first" : "last";
      expr = item.expr;
    }
    refuseKnownConstruct(expr);
    if (!allowed(ALLOWED_NODES.orderExpr, expr)) refuseOrderTerm(expr, scope);
    if (expr.type === "identifier") {
      // SQLite looks ORDER BY names up among the output names (aliases) first, then the table's columns.
      const name = identifierName(expr);
      const named = output.find((column) => sameName(column.name, name));
      if (named !== undefined) {
        once(named.column);
        continue;
      }
    }
    once(resolveColumn(expr as Parameters<typeof resolveColumn>[0], scope));
  }
  return terms;
}

function refuseOrderTerm(node: Node, scope: Scope): never {
  if (node.type === "binary_expr") {
    const message = lookup(REJECTED_OPERATORS, operatorName(node.operator));
    if (message !== undefined) refuse(message);
  }
  if (node.type === "number_literal") {
    refuse(`ORDER BY ${sourceOf(node, scope.sql)}: column positions are not supported; name the column or alias`);
  }
  refuse(`ORDER BY takes column names or aliases, not expressions: '${sourceOf(node, scope.sql)}'`);
}
