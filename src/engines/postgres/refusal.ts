/**
 * How the PostgreSQL compiler says no (DESIGN.md §14 "One dialect"): a construct it cannot give
 * SQLite's meaning on PostgreSQL is a 400 naming the construct and the engine, never a different
 * answer. Thrown inside the compiler, returned to the engine as a value (compile.ts).
 */
import { shown } from "../../sql/refusals.ts";
import type { Expr, Literal } from "../../sql/statement.ts";
import { dialect } from "./dialect.ts";

export class Refused extends Error {}

/** "<construct> is not available on tables served from PostgreSQL[: <what to do>]" (or the dialect's engine). */
export function notAvailable(construct: string, instead?: string): never {
  throw new Refused(`${construct} is not available on tables served from ${dialect().engine}${instead === undefined ? "" : `: ${instead}`}`);
}

/** An expression as a buyer would write it, for messages: quoted column names, one line, cut to 60 characters. */
export function described(expr: Expr, columns: readonly string[]): string {
  return shown(write(expr, columns));
}

function write(e: Expr, columns: readonly string[]): string {
  const inner = (child: Expr) => (isCompound(child) ? `(${write(child, columns)})` : write(child, columns));
  const not = (flag: boolean) => (flag ? "NOT " : "");
  switch (e.type) {
    case "column":
      return `"${(columns[e.column] ?? "?").replaceAll('"', '""')}"`;
    case "unary":
      return `${e.op === "NOT" ? "NOT " : e.op}${inner(e.expr)}`;
    case "binary":
      return `${inner(e.left)} ${e.op} ${inner(e.right)}`;
    case "truth":
      return `${inner(e.expr)} IS ${not(e.not)}${e.value ? "TRUE" : "FALSE"}`;
    case "like":
      return `${inner(e.expr)} ${not(e.not)}LIKE ${inner(e.pattern)}${e.escape === null ? "" : ` ESCAPE '${e.escape.replaceAll("'", "''")}'`}`;
    case "glob":
      return `${inner(e.expr)} ${not(e.not)}GLOB ${inner(e.pattern)}`;
    case "between":
      return `${inner(e.expr)} ${not(e.not)}BETWEEN ${inner(e.low)} AND ${inner(e.high)}`;
    case "in":
      return `${inner(e.expr)} ${not(e.not)}IN (${e.list.map((item) => write(item, columns)).join(", ")})`;
    case "cast":
      return `CAST(${write(e.expr, columns)} AS ${e.to})`;
    case "call":
      return `${e.name}(${e.args.map((arg) => write(arg, columns)).join(", ")})`;
    default:
      return literalText(e);
  }
}

const isCompound = (e: Expr) => ["unary", "binary", "truth", "like", "glob", "between", "in"].includes(e.type);

function literalText(l: Literal): string {
  switch (l.type) {
    case "integer":
      return l.value;
    case "real":
      return l.text;
    case "text":
      return `'${l.value.replaceAll("'", "''")}'`;
    case "blob":
      return `X'${l.hex}'`;
    case "null":
      return "NULL";
    case "bool":
      return l.value ? "TRUE" : "FALSE";
  }
}
