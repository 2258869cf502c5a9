/**
 * A static upper bound on the strings a WHERE expression can build (ARCHITECTURE.md §4, §8): SQLite
 * evaluates it once per row, and nested replace() over literals builds strings of gigabytes from a
 * 3 KB query (`replace(replace('x','x','<1000 x>'),'x','<1000 x>')` is already a megabyte). Every
 * value's length is bounded by `bytes + perValue × L`, where L is the longest value stored in the
 * table (unknown here); each node of the expression must stay within LIMITS.maxBuiltStringBytes
 * and LIMITS.maxStringGrowth. Runs after checkExpression, so the tree is allow-listed and at most
 * maxExpressionDepth deep.
 *
 * Size is not the only cost: instr(), replace() and LIKE / GLOB compare their two strings at every
 * position, so one row's evaluation takes time in proportion to the product of their lengths
 * (instr() of a built megabyte and a 30 KB needle: seconds per row). Neither SQLite nor a
 * terminated worker can stop within a row (engines/sqlite/guard.ts), so the sum of these products over the
 * expression, `bytes + perValue × L + perValueSquared × L²`, is bounded too (LIMITS.maxRowWork…).
 */
import type { FuncCall, Node } from "sql-parser-cst";
import { LIMITS } from "./allowlist.ts";
import { operatorName } from "./expression.ts";
import { foldCase, identifierName } from "./names.ts";
import { refuse, sourceOf } from "./refusals.ts";

export interface Bound {
  /** Bytes that do not depend on stored values. */
  bytes: number;
  /** Multiple of the longest stored value. */
  perValue: number;
}

/** Bytes compared per row by instr(), replace(), LIKE and GLOB: `bytes + perValue × L + perValueSquared × L²`. */
interface RowWork extends Bound {
  perValueSquared: number;
}

/** Operators that compare their text with their pattern at every position. */
const SEARCH_OPERATORS = new Set(["LIKE", "NOT LIKE", "GLOB", "NOT GLOB"]);

/** A number, a boolean or a date as text: at most this long (e.g. -1.2345678901234567e+308). */
const SHORT_TEXT = 32;
const SHORT: Bound = { bytes: SHORT_TEXT, perValue: 0 };
/** strftime() turns each 2-byte directive into at most 20 bytes (%J, %s with subsec). */
const STRFTIME_GROWTH = 10;
/** Functions whose result is no longer than their first argument (ASCII-only upper/lower in SQLite). */
const FIRST_ARGUMENT = new Set(["lower", "upper", "trim", "ltrim", "rtrim", "substr", "substring", "nullif"]);
const EITHER_ARGUMENT = new Set(["coalesce", "ifnull"]);

/**
 * Throws a 400 if some part of `node` can build too long a string, or if comparing its strings can
 * take too long for one row; returns the bound of the whole.
 */
export function checkStringGrowth(node: Node, sql: string): Bound {
  return checkedBound(node, sql, { bytes: 0, perValue: 0, perValueSquared: 0 });
}

function checkedBound(node: Node, sql: string, work: RowWork): Bound {
  const bound = boundOf(node, sql, work);
  if (bound.bytes > LIMITS.maxBuiltStringBytes) {
    refuse(
      `'${sourceOf(node, sql)}' can build a string of ${bound.bytes.toLocaleString("en-US")} bytes; the limit is ` +
        `${LIMITS.maxBuiltStringBytes.toLocaleString("en-US")}: use shorter literals or fewer nested replace()`,
    );
  }
  if (bound.perValue > LIMITS.maxStringGrowth) {
    refuse(
      `'${sourceOf(node, sql)}' can make a string ${bound.perValue.toLocaleString("en-US")} times longer than the values it reads; ` +
        `the limit is ${LIMITS.maxStringGrowth.toLocaleString("en-US")}: use fewer nested replace() or shorter replacements`,
    );
  }
  return bound;
}

function boundOf(node: Node, sql: string, work: RowWork): Bound {
  const check = (child: Node) => checkedBound(child, sql, work);
  switch (node.type) {
    case "identifier":
    case "member_expr":
      return { bytes: 0, perValue: 1 };
    case "string_literal":
      return { bytes: Buffer.byteLength(node.value, "utf8"), perValue: 0 };
    case "blob_literal":
      return { bytes: node.value.length, perValue: 0 };
    case "paren_expr":
      return node.expr.type === "list_expr" ? (node.expr.items.forEach(check), SHORT) : check(node.expr);
    case "prefix_op_expr":
      // Unary + returns its operand unchanged, text included.
      return operatorName(node.operator) === "+" ? check(node.expr) : (check(node.expr), SHORT);
    case "binary_expr": {
      const operator = operatorName(node.operator);
      const left = check(node.left);
      const right = check(node.right);
      // `pattern ESCAPE '!'`: the pattern is what LIKE compares.
      if (operator === "ESCAPE") return left;
      if (SEARCH_OPERATORS.has(operator)) {
        if (right.bytes > LIMITS.maxLikePatternBytes) {
          refuse(
            `The ${operator.replace("NOT ", "")} pattern in '${sourceOf(node, sql)}' can be ${right.bytes.toLocaleString("en-US")} bytes long; ` +
              `SQLite refuses patterns over ${LIMITS.maxLikePatternBytes.toLocaleString("en-US")} bytes: use a shorter pattern`,
          );
        }
        addWork(work, left, right, node, sql);
      }
      return operator === "||" ? add(left, right) : SHORT;
    }
    case "between_expr":
      [node.left, node.begin, node.end].forEach(check);
      return SHORT;
    case "cast_expr": {
      const inner = check(node.args.expr.expr);
      const type = node.args.expr.dataType;
      const name = type.type === "data_type_name" && !Array.isArray(type.name) ? type.name.name.toUpperCase() : "";
      return name === "TEXT" || name === "BLOB" ? max(inner, SHORT) : SHORT;
    }
    case "func_call":
      return callBound(node, sql, work);
    default:
      return SHORT;
  }
}

function callBound(node: FuncCall, sql: string, work: RowWork): Bound {
  const args = node.args?.expr.type === "func_args" ? node.args.expr.args.items : [];
  const bounds = args.map((arg) => checkedBound(arg, sql, work));
  const name = node.name.type === "identifier" ? foldCase(identifierName(node.name)) : "";
  if (FIRST_ARGUMENT.has(name)) return max(bounds[0]!, SHORT);
  if (EITHER_ARGUMENT.has(name)) return bounds.reduce(max, SHORT);
  if (name === "strftime") return scale(max(bounds[0]!, SHORT), STRFTIME_GROWTH);
  if (name === "instr") addWork(work, bounds[0]!, bounds[1]!, node, sql);
  if (name === "replace") {
    addWork(work, bounds[0]!, bounds[1]!, node, sql);
    return replaceBound(node, args, bounds, sql);
  }
  // abs round length instr date time datetime julianday unixepoch: numbers and dates.
  return SHORT;
}

/**
 * replace(text, pattern, replacement) replaces at most len(text) / len(pattern) occurrences, so
 * its result is at most len(text) × max(1, len(replacement) / len(pattern)); a pattern that is
 * not a literal may be a single byte, and an empty pattern leaves the text as it is.
 */
function replaceBound(node: FuncCall, args: Node[], [text, , replacement]: Bound[], sql: string): Bound {
  const pattern = args[1]!;
  const patternBytes =
    pattern.type === "string_literal" ? Buffer.byteLength(pattern.value, "utf8") : pattern.type === "blob_literal" ? pattern.value.length : 1;
  if (patternBytes === 0) return text!;
  if (text!.perValue > 0 && replacement!.perValue > 0) {
    refuse(
      `'${sourceOf(node, sql)}' takes both its text and its replacement from the table, so it can square a value's length: ` +
        "use a literal replacement",
    );
  }
  const fixedFactor = Math.max(1, replacement!.bytes / patternBytes);
  return {
    bytes: text!.bytes * fixedFactor,
    perValue: text!.perValue * fixedFactor + (text!.bytes * replacement!.perValue) / patternBytes,
  };
}

/**
 * Adds the comparison of `text` with `pattern` (at most |text| × |pattern| bytes) to the row's
 * work, and refuses the query at `node` once the total is over a limit.
 */
function addWork(work: RowWork, text: Bound, pattern: Bound, node: Node, sql: string): void {
  work.bytes += text.bytes * pattern.bytes;
  work.perValue += text.bytes * pattern.perValue + text.perValue * pattern.bytes;
  work.perValueSquared += text.perValue * pattern.perValue;
  const over =
    work.bytes > LIMITS.maxRowWork
      ? `${work.bytes.toLocaleString("en-US")} bytes`
      : work.perValue > LIMITS.maxRowWorkPerValueByte
        ? `${work.perValue.toLocaleString("en-US")} bytes for each byte of the values it reads`
        : work.perValueSquared > LIMITS.maxRowWorkSquared
          ? `${work.perValueSquared.toLocaleString("en-US")} times the square of the values' length`
          : null;
  if (over === null) return;
  refuse(
    `'${sourceOf(node, sql)}' can compare ${over} for every row (instr(), replace(), LIKE and GLOB take time in proportion ` +
      "to the lengths of both their strings): use shorter literals, fewer nested replace() or fewer such comparisons",
  );
}

const add = (a: Bound, b: Bound): Bound => ({ bytes: a.bytes + b.bytes, perValue: a.perValue + b.perValue });
const max = (a: Bound, b: Bound): Bound => ({ bytes: Math.max(a.bytes, b.bytes), perValue: Math.max(a.perValue, b.perValue) });
const scale = (a: Bound, factor: number): Bound => ({ bytes: a.bytes * factor, perValue: a.perValue * factor });
