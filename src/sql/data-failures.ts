/**
 * What in a WHERE can fail depending on the data (DESIGN.md §17 "A paid failure is not an oracle").
 * A query that fails is not charged; on a table whose quotes tell nothing about the data, a WHERE
 * built to fail on one row and not on another would read the table for free, one bit per request.
 * Such tables refuse these constructs before payment (service/query-service.ts); elsewhere they
 * stay accepted, since a count in the quote tells as much anyway.
 *
 * Of the allow-listed functions and operators (allowlist.ts), SQLite raises an error from a value
 * only in two places (every other function returns NULL or a number on bad input):
 * - abs() of the integer -9223372036854775808 ("integer overflow");
 * - a LIKE or GLOB pattern longer than 50,000 bytes ("LIKE or GLOB pattern too complex"): a pattern
 *   built from literals is bounded when the query is validated (growth.ts), one read from the
 *   table is not.
 * Strings longer than SQLite's 1e9-byte maximum ("string or blob too big") need stored values of
 * hundreds of megabytes (growth.ts bounds what a WHERE can build to 1,024× the longest value):
 * they are left to the uniform answer a failure after payment gets.
 */
import type { FuncCall, Node } from "sql-parser-cst";
import { operatorName } from "./expression.ts";
import { foldCase, identifierName, resolveColumn, type Scope } from "./names.ts";
import { sourceOf } from "./refusals.ts";

/** Operators whose right side is a pattern (before ESCAPE) that SQLite limits in length. */
const PATTERN_OPERATORS = new Set(["LIKE", "NOT LIKE", "GLOB", "NOT GLOB"]);

/** Functions whose value is never an integer (text, a real, or a small whole number such as length()). */
const NEVER_SMALLEST_INTEGER = new Set([
  "round", "lower", "upper", "length", "substr", "substring", "trim", "ltrim", "rtrim", "instr", "replace",
  "date", "time", "datetime", "julianday", "unixepoch", "strftime", "abs",
]);
/** Functions that return one of their arguments. */
const ONE_OF_ARGUMENTS = new Set(["coalesce", "ifnull", "nullif"]);

/**
 * The first construct of the WHERE expression that can fail on some stored value, as a sentence
 * saying what to write instead; null when none can.
 */
export function firstDataFailure(where: Node, scope: Scope): string | null {
  let found: string | null = null;
  const visit = (node: Node): void => {
    if (found !== null) return;
    if (node.type === "func_call" && calleeName(node) === "abs") {
      const arg = argumentsOf(node)[0];
      if (arg !== undefined && maySmallestInteger(arg, scope)) {
        const text = sourceOf(arg, scope.sql);
        found =
          `abs(${text}) fails when a value is -9223372036854775808 (integer overflow), which would tell what the table holds: ` +
          `on this table write abs(CAST(${text} AS REAL))`;
        return;
      }
    }
    if (node.type === "binary_expr" && PATTERN_OPERATORS.has(operatorName(node.operator))) {
      const pattern = node.right.type === "binary_expr" && operatorName(node.right.operator) === "ESCAPE" ? node.right.left : node.right;
      if (readsColumn(pattern)) {
        found =
          `the ${operatorName(node.operator).replace("NOT ", "")} pattern '${sourceOf(pattern, scope.sql)}' is read from the table, and SQLite refuses ` +
          "a pattern over 50,000 bytes, which would tell what the table holds: on this table write the pattern as a literal";
        return;
      }
    }
    for (const child of childrenOf(node)) visit(child);
  };
  visit(where);
  return found;
}

/**
 * Whether `node` may evaluate to the integer -2^63. Conservative: only what provably cannot is
 * false (a literal of another value, a text or real column, a function that returns text or a
 * real, a CAST to REAL or TEXT, a comparison).
 */
function maySmallestInteger(node: Node, scope: Scope): boolean {
  switch (node.type) {
    case "number_literal":
      // A hexadecimal literal is 64-bit two's complement: 0x8000000000000000 is -2^63.
      return integerLiteral(node) === SMALLEST_INTEGER;
    case "string_literal":
    case "blob_literal":
    case "boolean_literal":
    case "null_literal":
      return false;
    case "identifier":
    case "member_expr":
      return !neverStoresIntegers(resolveColumn(node, scope).declaredType);
    case "paren_expr":
      return node.expr.type === "list_expr" ? false : maySmallestInteger(node.expr, scope);
    case "prefix_op_expr": {
      const operator = operatorName(node.operator);
      if (operator === "+") return maySmallestInteger(node.expr, scope);
      // SQLite folds a minus before an integer literal into the literal: -9223372036854775808 and
      // -0x8000000000000000 are -2^63. Negating anything else happens row by row, where negating
      // -2^63 overflows to a real and text is read as a number first. NOT gives 0, 1 or NULL.
      if (operator === "-") {
        const literal = integerLiteral(withoutSigns(node.expr));
        return literal !== null && (literal === -SMALLEST_INTEGER || literal === SMALLEST_INTEGER);
      }
      return false;
    }
    case "cast_expr": {
      const type = node.args.expr.dataType;
      const name = type.type === "data_type_name" && !Array.isArray(type.name) ? type.name.name.toUpperCase() : "";
      return name !== "REAL" && name !== "TEXT" && name !== "BLOB";
    }
    case "func_call": {
      const name = calleeName(node);
      if (ONE_OF_ARGUMENTS.has(name)) return argumentsOf(node).some((arg) => maySmallestInteger(arg, scope));
      return !NEVER_SMALLEST_INTEGER.has(name);
    }
    case "binary_expr": {
      const operator = operatorName(node.operator);
      // Arithmetic may land on -2^63 (x - 1, x * 2); comparisons, LIKE, IN and || give 0, 1, NULL or text.
      return ["+", "-", "*", "/", "%"].includes(operator);
    }
    default:
      return false; // BETWEEN: 0, 1 or NULL
  }
}

/**
 * SQLite affinity (https://www.sqlite.org/datatype3.html §3.1): a TEXT column converts numbers to
 * text, a REAL column integers to reals; every other affinity (INTEGER, NUMERIC, none) keeps them.
 */
function neverStoresIntegers(declaredType: string): boolean {
  const type = declaredType.toUpperCase();
  if (type.includes("INT")) return false;
  if (type.includes("CHAR") || type.includes("CLOB") || type.includes("TEXT")) return true;
  if (type.includes("BLOB") || type === "") return false;
  return type.includes("REAL") || type.includes("FLOA") || type.includes("DOUB");
}

const SMALLEST_INTEGER = -(2n ** 63n);

/** The value of an integer literal as SQLite reads it (hexadecimal as 64-bit two's complement); null for any other node. */
function integerLiteral(node: Node): bigint | null {
  if (node.type !== "number_literal") return null;
  const text = node.text;
  if (/^0[xX]/.test(text)) return BigInt.asIntN(64, BigInt(text));
  return /^[0-9]+$/.test(text) ? BigInt(text) : null;
}

/** The node inside any parentheses and signs around it (SQLite folds them into a literal). */
function withoutSigns(node: Node): Node {
  if (node.type === "paren_expr" && node.expr.type !== "list_expr") return withoutSigns(node.expr);
  if (node.type === "prefix_op_expr" && ["+", "-"].includes(operatorName(node.operator))) return withoutSigns(node.expr);
  return node;
}

function readsColumn(node: Node): boolean {
  if (node.type === "identifier" || node.type === "member_expr") return true;
  return childrenOf(node).some(readsColumn);
}

function calleeName(node: FuncCall): string {
  return node.name.type === "identifier" ? foldCase(identifierName(node.name)) : "";
}

function argumentsOf(node: FuncCall): Node[] {
  return node.args?.expr.type === "func_args" ? node.args.expr.args.items : [];
}

/** The sub-expressions of an allow-listed expression node (expression.ts accepts no other kinds). */
function childrenOf(node: Node): Node[] {
  switch (node.type) {
    case "paren_expr":
      return node.expr.type === "list_expr" ? node.expr.items : [node.expr];
    case "prefix_op_expr":
      return [node.expr];
    case "binary_expr":
      return [node.left, node.right];
    case "between_expr":
      return [node.left, node.begin, node.end];
    case "func_call":
      return argumentsOf(node);
    case "cast_expr":
      return [node.args.expr.expr];
    default:
      return [];
  }
}
