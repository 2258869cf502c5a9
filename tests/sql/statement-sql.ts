/**
 * The neutral statement (src/sql/statement.ts) written back as SQLite SQL, every operation in
 * parentheses and every literal spelled so SQLite reads exactly its value: if the tree were not
 * SQLite's reading of the text (another precedence, another literal value, a lost sign), this SQL
 * would return other rows than the text. A test tool, not an engine: SQLite runs the text itself.
 */
import type { TableInfo } from "../../src/catalog.ts";
import type { Expr, Literal, Statement } from "../../src/sql/statement.ts";

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

export function statementSql(statement: Statement, table: TableInfo): string {
  const column = (index: number) => quoted(table.columns[index]!.name);
  const expr = (e: Expr): string => {
    switch (e.type) {
      case "column":
        return column(e.column);
      case "unary":
        return `(${e.op} ${expr(e.expr)})`;
      case "binary":
        return `(${expr(e.left)} ${e.op} ${expr(e.right)})`;
      case "truth":
        return `(${expr(e.expr)} IS ${e.not ? "NOT " : ""}${e.value ? "TRUE" : "FALSE"})`;
      case "like":
        return `(${expr(e.expr)} ${e.not ? "NOT " : ""}LIKE ${expr(e.pattern)}${e.escape === null ? "" : ` ESCAPE ${text(e.escape)}`})`;
      case "glob":
        return `(${expr(e.expr)} ${e.not ? "NOT " : ""}GLOB ${expr(e.pattern)})`;
      case "between":
        return `(${expr(e.expr)} ${e.not ? "NOT " : ""}BETWEEN ${expr(e.low)} AND ${expr(e.high)})`;
      case "in":
        return `(${expr(e.expr)} ${e.not ? "NOT " : ""}IN (${e.list.map(literal).join(", ")}))`;
      case "cast":
        return `CAST(${expr(e.expr)} AS ${e.to})`;
      case "call":
        return `${e.name}(${e.args.map(expr).join(", ")})`;
      default:
        return literal(e);
    }
  };
  const order = statement.orderBy.map(
    (term) => `${column(term.column)} ${term.descending ? "DESC" : "ASC"}${term.nulls === null ? "" : ` NULLS ${term.nulls.toUpperCase()}`}`,
  );
  return [
    `SELECT ${statement.columns.map((c) => `${column(c.column)} AS ${quoted(c.name)}`).join(", ")} FROM ${quoted(table.name)}`,
    statement.where === null ? "" : `WHERE ${expr(statement.where)}`,
    order.length === 0 ? "" : `ORDER BY ${order.join(", ")}`,
    statement.limit === null ? "" : `LIMIT ${statement.limit}`,
    statement.offset === null ? "" : `OFFSET ${statement.offset}`,
  ].filter((part) => part !== "").join(" ");
}

const text = (value: string) => `'${value.replaceAll("'", "''")}'`;

function literal(l: Literal): string {
  switch (l.type) {
    case "integer":
      // -9223372036854775808 is read as a folded negation; every other value is the plain digits.
      return l.value.startsWith("-") ? `(-${l.value.slice(1)})` : l.value;
    case "real": {
      const value = Number(l.value);
      if (!Number.isFinite(value)) return value > 0 ? "1e999" : "(-1e999)";
      // A point or exponent keeps it a real; 17 significant digits SQLite reads exactly.
      const digits = Object.is(value, -0) ? "0.0" : Math.abs(value).toPrecision(17);
      return value < 0 || Object.is(value, -0) ? `(-${digits})` : digits;
    }
    case "text":
      return text(l.value);
    case "blob":
      return `X'${l.hex}'`;
    case "null":
      return "NULL";
    case "bool":
      return l.value ? "TRUE" : "FALSE";
  }
}
