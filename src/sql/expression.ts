/**
 * Validates a WHERE expression (ARCHITECTURE.md §4) by walking its CST against allowlist.ts: a node is
 * accepted only if its type, operator, function or CAST type is listed; anything else is refused.
 * The walk also enforces the nesting limit, so it never recurses deeper than that limit. As it
 * accepts a node it builds the node's engine-neutral form (statement.ts), as SQLite reads it.
 */
import type { BinaryExpr, CastExpr, Expr as CstExpr, FuncCall, Node } from "sql-parser-cst";
import {
  AGGREGATE_FUNCTIONS, ALLOWED_NODES, BETWEEN_OPERATORS, BINARY_OPERATORS, CAST_TYPES, CLOCK_FUNCTIONS, ESCAPABLE_OPERATORS,
  FUNCTIONS, LIMITS, LIST_OPERATORS, PREFIX_OPERATORS, WINDOW_FUNCTIONS,
} from "./allowlist.ts";
import type { ColumnInfo } from "../catalog.ts";
import { foldCase, identifierName, resolveColumn, type Scope } from "./names.ts";
import { lookup, REJECTED_OPERATORS, refuse, refuseKnownConstruct, shown, sourceOf, TOO_DEEP } from "./refusals.ts";
import {
  blobLiteral, negatesToHexError, numberLiteral,
  type BinaryOperator, type CastType, type Expr, type Literal,
} from "./statement.ts";

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

/** `depth` counts operators, parentheses, calls and CASTs from the WHERE root (1). Returns the node's neutral form. */
export function checkExpression(node: Node, scope: Scope, depth: number): Expr {
  refuseKnownConstruct(node);
  if (!has(ALLOWED_NODES.expression, node.type)) refuse(`Unsupported expression '${sourceOf(node, scope.sql)}'`);
  if (node.type === "identifier" || node.type === "member_expr") return columnRef(resolveColumn(node, scope), scope);
  if (has(ALLOWED_NODES.literal, node.type)) return checkLiteral(node, scope);
  if (depth > LIMITS.maxExpressionDepth) refuse(TOO_DEEP);
  const next = depth + 1;
  switch (node.type) {
    case "paren_expr":
      // SQLite keeps no node for parentheses.
      return checkExpression(node.expr, scope, next);
    case "prefix_op_expr": {
      const operator = operatorName(node.operator);
      if (!has(PREFIX_OPERATORS, operator)) refuseOperator(operator);
      const operand = checkExpression(node.expr, scope, next);
      const number = withoutParens(node.expr);
      // SQLite folds a minus into the number it stands before (expr.c codeInteger/codeReal); it
      // refuses -0x8000000000000000 when it prepares the statement, which stays a negation here.
      if (operator === "-" && number.type === "number_literal" && !negatesToHexError(number.text)) {
        return numberLiteral(number.text, true);
      }
      return { type: "unary", op: operator as "-" | "+" | "NOT", expr: operand };
    }
    case "binary_expr":
      return checkBinary(node as BinaryExpr, scope, next);
    case "between_expr": {
      const operator = operatorName(node.betweenKw);
      if (!has(BETWEEN_OPERATORS, operator)) refuseOperator(operator);
      const [expr, low, high] = [node.left, node.begin, node.end].map((part) => checkExpression(part, scope, next)) as [Expr, Expr, Expr];
      return { type: "between", not: operator === "NOT BETWEEN", expr, low, high };
    }
    case "func_call":
      return checkCall(node, scope, next);
    case "cast_expr":
      return checkCast(node, scope, next);
  }
  refuse(`Unsupported expression '${sourceOf(node, scope.sql)}'`);
}

function withoutParens(node: Node): Node {
  return node.type === "paren_expr" ? withoutParens(node.expr) : node;
}

function columnRef(column: ColumnInfo, scope: Scope): Expr {
  return { type: "column", column: scope.table.columns.indexOf(column) };
}

/** `==` and `<>` are SQLite's spellings of `=` and `!=`. */
const CANONICAL_OPERATORS: Record<string, BinaryOperator> = { "==": "=", "<>": "!=" };

/**
 * Comparison operators at SQLite's two levels (parse.y): `<` `<=` `>` `>=` bind tighter than `=`
 * `==` `!=` `<>` `IS` `IS NOT` `GLOB` (`a = b < c` is `a = (b < c)`). sql-parser-cst reads both
 * levels as one, left to right (`(a = b) < c`): without parentheses a chain of them is regrouped
 * here. (It refuses LIKE, BETWEEN and IN in such chains.)
 */
const RELATIONAL = ["<", "<=", ">", ">="];
const EQUALITY = ["=", "==", "!=", "<>", "IS", "IS NOT", "GLOB", "NOT GLOB"];

function checkBinary(node: BinaryExpr, scope: Scope, next: number): Expr {
  const operator = operatorName(node.operator);
  if (!has(BINARY_OPERATORS, operator)) refuseOperator(operator);
  if (has(RELATIONAL, operator) || has(EQUALITY, operator)) return checkComparisons(node, scope, next - 1);
  const left = checkExpression(node.left, scope, next);
  const not = operator.startsWith("NOT ");
  if (has(LIST_OPERATORS, operator)) return { type: "in", not, expr: left, list: checkInList(node.right, scope) };
  const right = node.right;
  if (has(ESCAPABLE_OPERATORS, operator) && right.type === "binary_expr" && operatorName(right.operator) === "ESCAPE") {
    const pattern = checkExpression(right.left, scope, next);
    const escape = right.right;
    // SQLite checks this only while the query runs, with an error that would arrive mid-scan.
    if (escape.type !== "string_literal" || !has(ALLOWED_NODES.escape, escape.type) || [...escape.value].length !== 1) {
      refuse("ESCAPE takes a string literal of one character, e.g. ESCAPE '\\'");
    }
    return { type: "like", not, expr: left, pattern, escape: escape.value };
  }
  const rightExpr = checkExpression(right, scope, next);
  if (operator === "LIKE" || operator === "NOT LIKE") return { type: "like", not, expr: left, pattern: rightExpr, escape: null };
  return { type: "binary", op: operator as BinaryOperator, left, right: rightExpr };
}

/**
 * A chain of comparisons the parser read left to right, `((e0 op1 e1) op2 e2) …`, checked as
 * checkExpression would walk it (each operator and its depth first, down the left side, then the
 * operands from left to right at their depths), and built with SQLite's grouping.
 */
function checkComparisons(root: BinaryExpr, scope: Scope, depth: number): Expr {
  const operators: string[] = [];
  const rights: Node[] = [];
  let node: Node = root;
  for (let level = depth; ; level++) {
    if (node !== root) {
      if (node.type !== "binary_expr") break;
      const operator = operatorName(node.operator);
      if (!has(RELATIONAL, operator) && !has(EQUALITY, operator)) break;
      // What checkExpression checks before it reaches checkBinary, then checkBinary's own check.
      refuseKnownConstruct(node);
      if (level > LIMITS.maxExpressionDepth) refuse(TOO_DEEP);
      if (!has(BINARY_OPERATORS, operator)) refuseOperator(operator);
    }
    operators.unshift(operatorName((node as BinaryExpr).operator));
    rights.unshift((node as BinaryExpr).right);
    node = (node as BinaryExpr).left;
  }
  // The leftmost operand hangs under the deepest operator, as does the first right operand.
  const count = operators.length;
  const operands = [checkExpression(node, scope, depth + count), ...rights.map((right, i) => checkExpression(right, scope, depth + count - i))];
  // Relational operators first, left to right within each run; then the equality ones over the runs.
  const runs: Expr[] = [operands[0]!];
  const joins: string[] = [];
  operators.forEach((operator, i) => {
    if (has(RELATIONAL, operator)) runs[runs.length - 1] = comparison(runs.at(-1)!, operator, operands[i + 1]!);
    else {
      joins.push(operator);
      runs.push(operands[i + 1]!);
    }
  });
  return joins.reduce((left, operator, i) => comparison(left, operator, runs[i + 1]!), runs[0]!);
}

function comparison(left: Expr, operator: string, right: Expr): Expr {
  if (operator === "GLOB" || operator === "NOT GLOB") return { type: "glob", not: operator === "NOT GLOB", expr: left, pattern: right };
  // `x IS TRUE` is SQLite's truth test (resolve.c: TK_TRUTH), unless TRUE names a column.
  if ((operator === "IS" || operator === "IS NOT") && right.type === "bool") {
    return { type: "truth", not: operator === "IS NOT", value: right.value, expr: left };
  }
  return { type: "binary", op: lookup(CANONICAL_OPERATORS, operator) ?? (operator as BinaryOperator), left, right };
}

/** `x IN (literal, ...)`: literals only (a leading sign on a number is part of the literal). */
function checkInList(right: CstExpr, scope: Scope): Literal[] {
  if (right.type !== "paren_expr") refuse("IN takes a parenthesised list of literals, e.g. IN (1, 2, 3)");
  const inner = right.expr as Node;
  if (inner.type !== "list_expr") refuseKnownConstruct(inner);
  const items = inner.type === "list_expr" ? inner.items : [inner];
  if (items.length > LIMITS.maxInListItems) {
    refuse(`IN list has ${items.length} items; at most ${LIMITS.maxInListItems} are allowed: split the query`);
  }
  return items.map((item) => {
    const literal =
      item.type === "prefix_op_expr" && (item.operator === "-" || item.operator === "+") ? item.expr : item;
    if (!has(ALLOWED_NODES.literal, literal.type)) {
      refuseKnownConstruct(item);
      refuse(`IN lists take literal values only; '${sourceOf(item, scope.sql)}' is not a literal`);
    }
    if (literal !== item && literal.type !== "number_literal") refuse(`'${sourceOf(item, scope.sql)}' is not a literal`);
    const value = checkLiteral(literal, scope);
    if (literal !== item && item.type === "prefix_op_expr" && item.operator === "-" && literal.type === "number_literal") {
      if (negatesToHexError(literal.text)) refuse(`-${literal.text} is out of range: SQLite refuses it (hex literal too big)`);
      return numberLiteral(literal.text, true);
    }
    if (value.type === "column") refuse(`IN lists take literal values only; '${sourceOf(item, scope.sql)}' names a column of '${scope.table.name}'`);
    return value as Literal;
  });
}

/**
 * Number literals as SQLite reads them: decimal with an optional fraction and exponent, or at most
 * 16 significant hexadecimal digits (SQLite: "hex literal too big"). The parser reads some texts
 * that are not SQLite numbers as names instead (`1ee5`, `0x`); names.ts refuses those.
 */
const DECIMAL = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const HEXADECIMAL = /^0[xX]0*[0-9a-fA-F]{1,16}$/;

function checkLiteral(node: Node, scope: Scope): Expr {
  switch (node.type) {
    case "string_literal":
      // The sqlite dialect only produces single-quoted strings; check anyway, the executed text must be SQLite's.
      if (!node.text.startsWith("'")) refuse(`Unsupported literal '${sourceOf(node, scope.sql)}'`);
      return { type: "text", value: node.value };
    case "number_literal":
      if (!DECIMAL.test(node.text) && !HEXADECIMAL.test(node.text)) {
        refuse(`'${sourceOf(node, scope.sql)}' is not a number SQLite reads: write 1000, 1.5e3, or 0x followed by at most 16 hex digits`);
      }
      return numberLiteral(node.text);
    case "blob_literal":
      // The parser reads X'abc'; SQLite needs whole bytes.
      if ((node.text.length - "X''".length) % 2 !== 0) {
        refuse(`Blob literal ${sourceOf(node, scope.sql)} has an odd number of hex digits: write two per byte, e.g. X'0A'`);
      }
      return blobLiteral(node.text);
    case "boolean_literal": {
      // TRUE and FALSE are names to SQLite: a column of that name wins (resolve.c sqlite3ExprIdToTrueFalse).
      const column = scope.table.columns.find((c) => foldCase(c.name) === (node.value ? "true" : "false"));
      return column ? columnRef(column, scope) : { type: "bool", value: node.value };
    }
    case "null_literal":
      return { type: "null" };
  }
  refuse(`Unsupported literal '${sourceOf(node, scope.sql)}'`);
}

function checkCall(node: FuncCall, scope: Scope, next: number): Expr {
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
  return { type: "call", name, args: items.map((item) => checkExpression(item, scope, next)) };
}

function checkCast(node: CastExpr, scope: Scope, next: number): Expr {
  const arg = node.args.expr;
  if (operatorName(node.castKw) !== "CAST" || arg.format) refuse(`Unsupported CAST '${sourceOf(node, scope.sql)}'`);
  const type = arg.dataType;
  const typeName = type.type === "data_type_name" && !Array.isArray(type.name) ? type.name.name.toUpperCase() : null;
  if (!has(ALLOWED_NODES.castType, type.type) || typeName === null || !has(CAST_TYPES, typeName)) {
    refuse(`CAST to '${sourceOf(type, scope.sql)}' is not supported; allowed types: ${CAST_TYPES.join(", ")}`);
  }
  const expr = checkExpression(arg.expr, scope, next);
  // INT and INTEGER are one affinity to SQLite.
  return { type: "cast", expr, to: typeName === "INT" ? "INTEGER" : (typeName as CastType) };
}
