/**
 * Validates a WHERE expression (ARCHITECTURE.md §4) by walking its CST against allowlist.ts: a node is
 * accepted only if its type, operator, function or CAST type is listed; anything else is refused.
 * The walk also enforces the nesting limit, so it never recurses deeper than that limit.
 */
import type { BinaryExpr, CastExpr, Expr, FuncCall, Node } from "sql-parser-cst";
import {
  AGGREGATE_FUNCTIONS, ALLOWED_NODES, BETWEEN_OPERATORS, BINARY_OPERATORS, CAST_TYPES, CLOCK_FUNCTIONS, ESCAPABLE_OPERATORS,
  FUNCTIONS, LIMITS, LIST_OPERATORS, PREFIX_OPERATORS, WINDOW_FUNCTIONS,
} from "./allowlist.ts";
import { foldCase, identifierName, resolveColumn, type Scope } from "./names.ts";
import { lookup, REJECTED_OPERATORS, refuse, refuseKnownConstruct, shown, sourceOf, TOO_DEEP } from "./refusals.ts";

const has = (list: readonly string[], item: string) => list.includes(item);

/** Operator text as written in allowlist.ts: symbols as-is, keywords upper-case joined by a space. */
export function operatorName(operator: unknown): string {
  if (typeof operator === "string") return operator;
  if (Array.isArray(operator)) return operator.map(operatorName).join(" ");
  if (operator && typeof operator === "object" && "name" in operator && typeof operator.name === "string") {
    return operator.name.toUpperCase();
  }
  return "?";
}

function refuseOperator(operator: string): never {
  refuse(lookup(REJECTED_OPERATORS, operator) ?? `Operator '${shown(operator)}' is not supported; allowed operators: ${BINARY_OPERATORS.join(" ")}`);
}

/** `depth` counts operators, parentheses, calls and CASTs from the WHERE root (1). */
export function checkExpression(node: Node, scope: Scope, depth: number): void {
  refuseKnownConstruct(node);
  if (!has(ALLOWED_NODES.expression, node.type)) refuse(`Unsupported expression '${sourceOf(node, scope.sql)}'`);
  if (node.type === "identifier" || node.type === "member_expr") return void resolveColumn(node, scope);
  if (has(ALLOWED_NODES.literal, node.type)) return checkLiteral(node, scope);
  if (depth > LIMITS.maxExpressionDepth) refuse(TOO_DEEP);
  const next = depth + 1;
  switch (node.type) {
    case "paren_expr":
      return checkExpression(node.expr, scope, next);
    case "prefix_op_expr": {
      const operator = operatorName(node.operator);
      if (!has(PREFIX_OPERATORS, operator)) refuseOperator(operator);
      return checkExpression(node.expr, scope, next);
    }
    case "binary_expr":
      return checkBinary(node as BinaryExpr, scope, next);
    case "between_expr":
      if (!has(BETWEEN_OPERATORS, operatorName(node.betweenKw))) refuseOperator(operatorName(node.betweenKw));
      for (const part of [node.left, node.begin, node.end]) checkExpression(part, scope, next);
      return;
    case "func_call":
      return checkCall(node, scope, next);
    case "cast_expr":
      return checkCast(node, scope, next);
  }
  refuse(`Unsupported expression '${sourceOf(node, scope.sql)}'`);
}

function checkBinary(node: BinaryExpr, scope: Scope, next: number): void {
  const operator = operatorName(node.operator);
  if (!has(BINARY_OPERATORS, operator)) refuseOperator(operator);
  checkExpression(node.left, scope, next);
  if (has(LIST_OPERATORS, operator)) return checkInList(node.right, scope);
  const right = node.right;
  if (has(ESCAPABLE_OPERATORS, operator) && right.type === "binary_expr" && operatorName(right.operator) === "ESCAPE") {
    checkExpression(right.left, scope, next);
    const escape = right.right;
    // SQLite checks this only while the query runs, with an error that would arrive mid-scan.
    if (escape.type !== "string_literal" || !has(ALLOWED_NODES.escape, escape.type) || [...escape.value].length !== 1) {
      refuse("ESCAPE takes a string literal of one character, e.g. ESCAPE '\\'");
    }
    return;
  }
  checkExpression(right, scope, next);
}

/** `x IN (literal, ...)`: literals only (a leading sign on a number is part of the literal). */
function checkInList(right: Expr, scope: Scope): void {
  if (right.type !== "paren_expr") refuse("IN takes a parenthesised list of literals, e.g. IN (1, 2, 3)");
  const inner = right.expr as Node;
  if (inner.type !== "list_expr") refuseKnownConstruct(inner);
  const items = inner.type === "list_expr" ? inner.items : [inner];
  if (items.length > LIMITS.maxInListItems) {
    refuse(`IN list has ${items.length} items; at most ${LIMITS.maxInListItems} are allowed: split the query`);
  }
  for (const item of items) {
    const literal =
      item.type === "prefix_op_expr" && (item.operator === "-" || item.operator === "+") ? item.expr : item;
    if (!has(ALLOWED_NODES.literal, literal.type)) {
      refuseKnownConstruct(item);
      refuse(`IN lists take literal values only; '${sourceOf(item, scope.sql)}' is not a literal`);
    }
    if (literal !== item && literal.type !== "number_literal") refuse(`'${sourceOf(item, scope.sql)}' is not a literal`);
    checkLiteral(literal, scope);
  }
}

/**
 * Number literals as SQLite reads them: decimal with an optional fraction and exponent, or at most
 * 16 significant hexadecimal digits (SQLite: "hex literal too big"). The parser reads some texts
 * that are not SQLite numbers as names instead (`1ee5`, `0x`); names.ts refuses those.
 */
const DECIMAL = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const HEXADECIMAL = /^0[xX]0*[0-9a-fA-F]{1,16}$/;

function checkLiteral(node: Node, scope: Scope): void {
  // The sqlite dialect only produces single-quoted strings; check anyway, the executed text must be SQLite's.
  if (node.type === "string_literal" && !node.text.startsWith("'")) refuse(`Unsupported literal '${sourceOf(node, scope.sql)}'`);
  if (node.type === "number_literal" && !DECIMAL.test(node.text) && !HEXADECIMAL.test(node.text)) {
    refuse(`'${sourceOf(node, scope.sql)}' is not a number SQLite reads: write 1000, 1.5e3, or 0x followed by at most 16 hex digits`);
  }
  // The parser reads X'abc'; SQLite needs whole bytes.
  if (node.type === "blob_literal" && (node.text.length - "X''".length) % 2 !== 0) {
    refuse(`Blob literal ${sourceOf(node, scope.sql)} has an odd number of hex digits: write two per byte, e.g. X'0A'`);
  }
}

function checkCall(node: FuncCall, scope: Scope, next: number): void {
  if (node.over) refuse(`Window functions (OVER) are not supported: '${sourceOf(node, scope.sql)}'`);
  if (node.filter) refuse("FILTER is not supported: aggregates are not available");
  if (node.name.type !== "identifier") refuse(`Qualified function name '${sourceOf(node.name, scope.sql)}' is not supported`);
  const name = foldCase(identifierName(node.name));
  if (has(AGGREGATE_FUNCTIONS, name)) refuse(`Aggregate function '${name}' is not supported: Simplified SQL returns table rows; aggregate on the client`);
  if (has(WINDOW_FUNCTIONS, name)) refuse(`Window function '${name}' is not supported`);
  const arity = lookup(FUNCTIONS, name);
  if (!arity) refuse(`Function '${shown(name)}' is not allowed; allowed functions: ${Object.keys(FUNCTIONS).join(", ")}`);
  if (has(CLOCK_FUNCTIONS, name)) scope.readsClock = true;
  const args = node.args?.expr;
  if (!args || args.type !== "func_args") refuse(`Function '${name}' must be called with parentheses: ${name}(...)`);
  if (args.distinctKw || args.orderBy || args.limit || args.having || args.nullHandlingKw) {
    refuse(`Only plain arguments are allowed in a call to '${name}': '${sourceOf(node, scope.sql)}'`);
  }
  const items = args.args.items;
  if (items.length < arity.min || (arity.max !== null && items.length > arity.max)) {
    const expected = arity.max === arity.min ? `${arity.min}` : arity.max === null ? `at least ${arity.min}` : `${arity.min} to ${arity.max}`;
    refuse(`Function '${name}' takes ${expected} argument${expected === "1" ? "" : "s"}; got ${items.length}`);
  }
  for (const item of items) checkExpression(item, scope, next);
}

function checkCast(node: CastExpr, scope: Scope, next: number): void {
  const arg = node.args.expr;
  if (operatorName(node.castKw) !== "CAST" || arg.format) refuse(`Unsupported CAST '${sourceOf(node, scope.sql)}'`);
  const type = arg.dataType;
  const typeName = type.type === "data_type_name" && !Array.isArray(type.name) ? type.name.name.toUpperCase() : null;
  if (!has(ALLOWED_NODES.castType, type.type) || typeName === null || !has(CAST_TYPES, typeName)) {
    refuse(`CAST to '${sourceOf(type, scope.sql)}' is not supported; allowed types: ${CAST_TYPES.join(", ")}`);
  }
  checkExpression(arg.expr, scope, next);
}
