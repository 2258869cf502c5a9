/**
 * The neutral statement's expressions (src/sql/statement.ts) compiled into PostgreSQL expressions
 * with SQLite's meaning (DESIGN.md §14 "One dialect"). Each operation compiles only for operand
 * classes whose meaning it keeps (values.ts); anything else is refused by name (refusal.ts).
 * Constants are folded with SQLite's rules, so PostgreSQL never computes on them itself.
 */
import type { Expr, Literal } from "../../sql/statement.ts";
import type { PostgresColumn } from "./columns.ts";
import { compare, same } from "./comparisons.ts";
import { dialect } from "./dialect.ts";
import { call } from "./functions.ts";
import { glob, like } from "./patterns.ts";
import { described, notAvailable } from "./refusal.ts";
import { arithmetic, doubleToInt64, INT64_MIN, numberFromText, type ArithmeticOperator } from "./sqlite-numbers.ts";
import {
  asFloat8, asInt8, asText, boolAsInt, booleanValue, condition, constantNumber, constantValue, isNull, NULL_VALUE, type Value,
} from "./values.ts";

export interface Scope {
  columns: readonly PostgresColumn[];
  /** Constructs whose PostgreSQL form can fail on some stored value where SQLite's does not (compile.ts `failsOnData`). */
  failures: string[];
}

export function compileExpression(e: Expr, scope: Scope): Value {
  const construct = () => `'${described(e, scope.columns.map((c) => c.name))}'`;
  switch (e.type) {
    case "column":
      return column(e.column, scope);
    case "unary": {
      const operand = compileExpression(e.expr, scope);
      if (e.op === "+") return { ...operand, affinity: "none" }; // SQLite's no-op, which drops the column's affinity
      if (e.op === "-") return negate(operand, construct(), scope);
      if (isNull(operand)) return NULL_VALUE;
      return booleanValue(`(NOT ${condition(operand, construct())})`);
    }
    case "binary":
      return binary(e.op, compileExpression(e.left, scope), compileExpression(e.right, scope), construct(), scope);
    case "truth": {
      const truth = condition(compileExpression(e.expr, scope), construct());
      return booleanValue(`(${truth} IS ${e.not ? "NOT " : ""}${e.value ? "TRUE" : "FALSE"})`);
    }
    case "like":
      return booleanValue(like(compileExpression(e.expr, scope), compileExpression(e.pattern, scope), e.escape, e.not, construct()));
    case "glob":
      return booleanValue(glob(compileExpression(e.expr, scope), compileExpression(e.pattern, scope), e.not, construct()));
    case "between": {
      // SQLite reads it as x >= low AND x <= high, each comparison with its own affinity (expr.c exprCodeBetween).
      const x = compileExpression(e.expr, scope);
      const test = `(${compare(x, ">=", compileExpression(e.low, scope), construct())} AND ${compare(x, "<=", compileExpression(e.high, scope), construct())})`;
      return booleanValue(e.not ? `(NOT ${test})` : test);
    }
    case "in": {
      // x IN (a, b) is x = a OR x = b, the list items without affinity (https://sqlite.org/lang_expr.html#the_in_and_not_in_operators).
      const x = compileExpression(e.expr, scope);
      if (e.list.length === 0) return booleanValue(e.not ? "true" : "false");
      const test = `(${e.list.map((item) => compare(x, "=", literal(item), construct())).join(" OR ")})`;
      return booleanValue(e.not ? `(NOT ${test})` : test);
    }
    case "cast":
      return cast(compileExpression(e.expr, scope), e.to, construct(), scope);
    case "call":
      return call(e.name, e.args.map((arg) => compileExpression(arg, scope)), construct(), scope);
    default:
      return literal(e);
  }
}

export function literal(l: Literal): Value {
  switch (l.type) {
    case "integer":
      return constantValue({ kind: "int", value: BigInt(l.value) });
    case "real":
      return constantValue({ kind: "real", value: Number(l.value) });
    case "text":
      return constantValue({ kind: "text", value: l.value });
    case "blob":
      return constantValue({ kind: "blob", hex: l.hex });
    case "null":
      return NULL_VALUE;
    case "bool":
      return booleanValue(l.value ? "true" : "false");
  }
}

function column(index: number, scope: Scope): Value {
  const c = scope.columns[index]!;
  if (c.class === null) {
    return notAvailable(`Column "${c.name}" of type ${c.sourceType} in WHERE`, "SQLite has no counterpart of its values' comparisons; select it and filter on the client");
  }
  return { sql: c.sql, class: c.class, affinity: c.affinity, narrow: c.narrow };
}

function binary(op: string, a: Value, b: Value, construct: string, scope: Scope): Value {
  switch (op) {
    case "AND":
    case "OR":
      return booleanValue(`(${condition(a, construct)} ${op} ${condition(b, construct)})`);
    case "=":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
      return booleanValue(compare(a, op, b, construct));
    case "IS":
      return booleanValue(same(a, b, construct));
    case "IS NOT":
      return booleanValue(`(NOT ${same(a, b, construct)})`);
    case "||":
      return concatenate(a, b, construct);
    default:
      return arithmeticOf(op as ArithmeticOperator, a, b, construct, scope);
  }
}

function concatenate(a: Value, b: Value, construct: string): Value {
  if (isNull(a) || isNull(b)) return NULL_VALUE;
  const [x, y] = [asText(a, `${construct} (||)`), asText(b, `${construct} (||)`)];
  if (x.constant?.kind === "text" && y.constant?.kind === "text") return constantValue({ kind: "text", value: x.constant.value + y.constant.value });
  return { sql: `(${x.sql} || ${y.sql})`, class: "text", affinity: "none" };
}

/** The largest integer the INTEGER side of a `num` may reach and still be exact as a double. */
const EXACT = 2n ** 53n;

/** An operand of arithmetic: numbers only (SQLite reads text as the number it starts with). */
function numeric(v: Value, construct: string): Value {
  switch (v.class) {
    case "int":
    case "real":
    case "num":
    case "null":
      return v;
    case "bool":
      return boolAsInt(v);
    case "mixed":
      return notAvailable(`${construct}, arithmetic on coalesce() of values of different kinds`, "coalesce values of one kind");
    default:
      return notAvailable(`${construct}, arithmetic on ${v.class === "numeric" ? "a NUMERIC column" : v.class === "blob" ? "a blob" : "text"}`, "SQLite converts it to a number its own way; compare it instead");
  }
}

function arithmeticOf(op: ArithmeticOperator, left: Value, right: Value, construct: string, scope: Scope): Value {
  const a = numeric(left, construct);
  const b = numeric(right, construct);
  if (isNull(a) || isNull(b)) return NULL_VALUE;
  const ca = constantNumber(a);
  const cb = constantNumber(b);
  if (ca !== undefined && cb !== undefined) {
    const result = arithmetic(op, ca, cb);
    return result === null ? NULL_VALUE : constantValue(typeof result === "bigint" ? { kind: "int", value: result } : { kind: "real", value: result });
  }
  if (a.class === "int" && b.class === "int") {
    const [x, y] = [asInt8(a), asInt8(b)];
    // Only -9223372036854775808 / -1 overflows a division.
    const divisor = constantNumber(b);
    if (op !== "%" && !(op === "/" && divisor !== undefined && divisor !== -1n)) {
      scope.failures.push(`${construct}: ${dialect().engine} fails on an INTEGER result beyond 64 bits, where SQLite switches to REAL: on this table CAST an operand AS REAL`);
    }
    // SQLite: division or remainder by zero is NULL; C's / and % truncate toward zero, as PostgreSQL's.
    const sql = op === "/" ? dialect().integerDivide(x, y) : op === "%" ? `(${x} % NULLIF(${y}, 0))` : `(${x} ${op} ${y})`;
    return { sql, class: "int", affinity: "none" };
  }
  // coalesce(price, 0) is INTEGER on the rows where price is NULL: as a double it is exact while
  // small, but `/` would divide integers there, and an INTEGER column would not be exact.
  const num = a.class === "num" || b.class === "num";
  const real = a.class === "real" || b.class === "real";
  const integer = [a, b].find((v) => v.class === "int");
  if (num && ((integer !== undefined && typeof constantNumber(integer) !== "bigint") || (!real && op === "/"))) {
    return notAvailable(`${construct}, arithmetic on coalesce() or ifnull() of INTEGER and REAL values`, "CAST the arguments to REAL");
  }
  // Dividing by a number of magnitude 1 or more never overflows.
  const divisor = constantNumber(b);
  if (dialect().realOverflowFails && !(op === "/" && divisor !== undefined && Math.abs(Number(divisor)) >= 1)) {
    scope.failures.push(`${construct}: ${dialect().engine} fails on a REAL result beyond ±1.8e308, where SQLite gives Inf`);
  }
  const [x, y] = [asFloat8(a), asFloat8(b)];
  let sql: string;
  if (op === "%") {
    // SQLite: the remainder of both operands truncated to integers (vdbe.c OP_Remainder).
    const trunc = dialect().fn("trunc");
    sql = `((${trunc}(${x}))::int8 % NULLIF((${trunc}(${y}))::int8, 0))::float8`;
    scope.failures.push(`${construct}: ${dialect().engine} fails on a REAL beyond int64 in %, where SQLite saturates it`);
  } else {
    const divisor = op === "/" ? `NULLIF(${y}, '0'::float8)` : y;
    // A NaN result (Inf - Inf) is NULL in SQLite.
    sql = `NULLIF((${x} ${op} ${divisor}), 'NaN'::float8)`;
  }
  if (!num || real) return { sql, class: "real", affinity: "none" };
  const bound = (v: Value) => (v.class === "num" ? (v.bound ?? 0n) : abs(constantNumber(v) as bigint));
  const total = op === "*" ? bound(a) * bound(b) : op === "%" ? bound(a) : bound(a) + bound(b);
  if (total > EXACT) return notAvailable(`${construct}, arithmetic on coalesce() or ifnull() of INTEGER and REAL values`, "CAST the arguments to REAL");
  return { sql, class: "num", affinity: "none", bound: total };
}

const abs = (v: bigint) => (v < 0n ? -v : v);

function negate(v: Value, construct: string, scope: Scope): Value {
  if (isNull(v)) return NULL_VALUE;
  const n = numeric(v, construct);
  const constant = constantNumber(n);
  if (typeof constant === "bigint") {
    if (constant === INT64_MIN) notAvailable(`${construct}, negating -9223372036854775808`, "SQLite makes it a REAL, or refuses it as a hex literal");
    return constantValue({ kind: "int", value: -constant });
  }
  if (typeof constant === "number") return constantValue({ kind: "real", value: -constant });
  if (n.class === "int") {
    scope.failures.push(`${construct}: ${dialect().engine} fails to negate -9223372036854775808, where SQLite gives a REAL`);
    return { sql: `(- ${asInt8(n)})`, class: "int", affinity: "none" };
  }
  return { sql: `(- ${n.sql})`, class: n.class, affinity: "none", bound: n.bound };
}

/** CAST with SQLite's conversions (https://sqlite.org/lang_expr.html#castexpr), where PostgreSQL can match them. */
function cast(v: Value, to: string, construct: string, scope: Scope): Value {
  const affinity = ({ INTEGER: "integer", REAL: "real", TEXT: "text", BLOB: "blob", NUMERIC: "numeric" } as const)[to as "INTEGER"];
  const typed = (value: Value): Value => ({ ...value, affinity });
  if (isNull(v)) return typed(NULL_VALUE);
  const refuse = (what: string) =>
    notAvailable(`${construct}, CAST of ${what} AS ${to}`, "SQLite converts it by its own rules; compare the value as it is");
  const number = constantNumber(v);
  const text = v.constant?.kind === "text" ? v.constant.value : undefined;
  // A date's or timestamp's text starts with its year: the number SQLite reads from it.
  if ((v.class === "date" || v.class === "timestamptz" || v.class === "timestamp") && (to === "INTEGER" || to === "REAL" || to === "NUMERIC")) {
    const at = v.class === "timestamptz" ? `(${v.sql} AT TIME ZONE 'UTC')` : v.sql;
    const year = `(EXTRACT(YEAR FROM ${at}))::int8`;
    return typed(to === "REAL" ? { sql: `(${year})::float8`, class: "real", affinity } : { sql: year, class: "int", affinity });
  }
  if (v.class === "mixed") return refuse("coalesce() of values of different kinds");
  switch (to) {
    case "INTEGER":
      if (v.class === "int" || v.class === "bool") return typed(boolAsInt(v));
      if (typeof number === "number") return typed(constantValue({ kind: "int", value: doubleToInt64(number) }));
      if (text !== undefined && /^[+-]?[0-9]{1,18}$/.test(text)) return typed(constantValue({ kind: "int", value: BigInt(text) }));
      if (v.class === "real" || v.class === "num" || v.class === "numeric") {
        scope.failures.push(`${construct}: ${dialect().engine} fails on a value beyond int64, where SQLite saturates it`);
        return typed({ sql: `(${dialect().fn("trunc")}(${v.sql}))::int8`, class: "int", affinity });
      }
      return refuse(v.class === "blob" ? "a blob" : "text");
    case "REAL":
      if (number !== undefined) return typed(constantValue({ kind: "real", value: Number(number) }));
      if (text !== undefined && /^[+-]?[0-9]{1,17}(\.[0-9]+)?$/.test(text) && text.replace(/[^0-9]/g, "").length <= 17) {
        return typed(constantValue({ kind: "real", value: Number(text) }));
      }
      if (v.class === "int" || v.class === "bool" || v.class === "real" || v.class === "num") return typed({ sql: asFloat8(boolAsInt(v)), class: "real", affinity });
      if (v.class === "numeric") return typed({ sql: `(${v.sql})::float8`, class: "real", affinity });
      return refuse(v.class === "blob" ? "a blob" : "text");
    case "TEXT":
      return typed(asText(v, `${construct} (CAST AS TEXT)`));
    case "BLOB": {
      if (v.class === "blob") return typed(v);
      const asString = asText(v, `${construct} (CAST AS BLOB)`);
      if (asString.constant?.kind === "text") return typed(constantValue({ kind: "blob", hex: Buffer.from(asString.constant.value, "utf8").toString("hex") }));
      return typed({ sql: dialect().utf8Bytes(asString.sql), class: "blob", affinity });
    }
    default: {
      // NUMERIC: INTEGER when the value is a whole number in int64, else REAL.
      if (v.class === "int" || v.class === "bool") return typed(boolAsInt(v));
      const value = typeof number === "number" ? number : text !== undefined ? numberFromText(text)?.value : undefined;
      if (typeof value === "bigint") return typed(constantValue({ kind: "int", value }));
      if (typeof value === "number" && (text === undefined || (numberFromText(text)?.digits ?? 99) <= 17)) {
        const whole = Number.isInteger(value) && value > -9223372036854775808 && value < 9223372036854775807;
        return typed(constantValue(whole ? { kind: "int", value: BigInt(value) } : { kind: "real", value }));
      }
      if (value === undefined && text !== undefined) return refuse("text that is not a number");
      return refuse(v.class === "blob" ? "a blob" : v.class === "numeric" ? "a NUMERIC column" : "a REAL value");
    }
  }
}
