/**
 * Simplified SQL as the README's grammar defines it, built from the real catalog: select lists,
 * table names bare and quoted, WHERE expressions of every form the dialect allows (functions with
 * their right arity, strftime formats and date modifiers, CAST types, LIKE/GLOB/ESCAPE patterns,
 * IN lists), ORDER BY, LIMIT/OFFSET, and literals at the edges of int64 and double. The fuzzer's
 * mutations (sql-gen.ts) start from these.
 */
import type { Random } from "./random.ts";
import { ALLOWED_FUNCTIONS, CAST_TYPES, DATE_MODIFIERS, ODD_CAST_TYPES, STRFTIME_FORMATS } from "./sqlite-words.ts";


export interface FuzzTable {
  name: string;
  columns: string[];
  /** Queries on it are paid (per_row or fixed price tags). */
  paid: boolean;
}

export interface FuzzCatalog {
  tables: FuzzTable[];
}

export type Tokens = string[];

/** A Simplified SQL query of the dialect (valid, or meant to be; SQLite may still refuse it at run time). */
export function validQuery(rng: Random, catalog: FuzzCatalog, table = rng.pick(catalog.tables)): Tokens {
  const tokens: Tokens = ["SELECT", ...selectList(rng, table), "FROM", tableName(rng, table)];
  if (rng.chance(0.7)) tokens.push("WHERE", ...expression(rng, table, rng.int(1, 4)));
  if (rng.chance(0.4)) tokens.push("ORDER", "BY", ...orderList(rng, table));
  if (rng.chance(0.5)) {
    tokens.push("LIMIT", String(rng.pick([0, 1, 2, 3, 10, 100, 1000, rng.int(0, 300)])));
    if (rng.chance(0.3)) tokens.push("OFFSET", String(rng.pick([0, 1, 5, 199, 1_000_000])));
  }
  if (rng.chance(0.15)) tokens.push(";");
  return tokens.map((token) => (rng.chance(0.1) ? recase(rng, token) : token));
}


export function recase(rng: Random, token: string): string {
  return [...token].map((c) => (rng.chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join("");
}

function tableName(rng: Random, table: FuzzTable): string {
  return rng.weighted<string>([
    [8, table.name],
    [2, `"${table.name}"`],
    [1, table.name.toUpperCase()],
  ]);
}

function columnRef(rng: Random, table: FuzzTable): string {
  const column = rng.pick(table.columns);
  return rng.weighted<string>([
    [10, column],
    [2, `"${column}"`],
    [2, `${table.name}.${column}`],
    [1, `"${table.name}"."${column}"`],
    [1, column.toUpperCase()],
  ]);
}

function selectList(rng: Random, table: FuzzTable): Tokens {
  if (rng.chance(0.3)) return ["*"];
  const columns = rng.shuffle([...table.columns]).slice(0, rng.int(1, table.columns.length));
  const tokens: Tokens = [];
  columns.forEach((column, i) => {
    if (i > 0) tokens.push(",");
    tokens.push(rng.chance(0.2) ? `"${column}"` : column);
    if (rng.chance(0.2)) tokens.push("AS", rng.pick([`a${i}`, `"alias ${i}"`, `"${rng.unicode(3).replaceAll('"', '""')}"`, `x${i}`]));
  });
  return tokens;
}

function orderList(rng: Random, table: FuzzTable): Tokens {
  const tokens: Tokens = [];
  const count = rng.int(1, 3);
  for (let i = 0; i < count; i++) {
    if (i > 0) tokens.push(",");
    tokens.push(columnRef(rng, table));
    if (rng.chance(0.5)) tokens.push(rng.pick(["ASC", "DESC"]));
    if (rng.chance(0.2)) tokens.push("NULLS", rng.pick(["FIRST", "LAST"]));
  }
  return tokens;
}

/** A WHERE expression of the dialect, `depth` levels at most. */
export function expression(rng: Random, table: FuzzTable, depth: number): Tokens {
  if (depth <= 0) return rng.chance(0.5) ? [columnRef(rng, table)] : [literal(rng)];
  // Compound operands in parentheses mostly: the parser reads some unparenthesised chains differently from SQLite.
  const sub = () => {
    const inner = expression(rng, table, depth - 1);
    return inner.length > 1 && rng.chance(0.8) ? ["(", ...inner, ")"] : inner;
  };
  const form = rng.weighted<string>([
    [3, "column"],
    [3, "literal"],
    [5, "compare"],
    [2, "logic"],
    [2, "arith"],
    [1, "paren"],
    [1, "prefix"],
    [1, "between"],
    [1.5, "in"],
    [1.5, "like"],
    [0.7, "glob"],
    [1, "isnull"],
    [0.7, "is"],
    [1, "cast"],
    [3, "function"],
  ]);
  switch (form) {
    case "column":
      return [columnRef(rng, table)];
    case "literal":
      return [literal(rng)];
    case "compare":
      return [...sub(), rng.pick(["=", "==", "!=", "<>", "<", "<=", ">", ">="]), ...sub()];
    case "logic":
      return [...sub(), rng.pick(["AND", "OR"]), ...sub()];
    case "arith":
      return [...sub(), rng.pick(["+", "-", "*", "/", "%", "||"]), ...sub()];
    case "paren":
      return ["(", ...sub(), ")"];
    case "prefix":
      return [rng.pick(["-", "+", "NOT"]), ...sub()];
    case "between":
      return [...sub(), ...(rng.chance(0.3) ? ["NOT"] : []), "BETWEEN", ...sub(), "AND", ...sub()];
    case "in": {
      const items = Array.from({ length: rng.int(1, rng.chance(0.1) ? 300 : 6) }, () => literal(rng));
      return [...sub(), ...(rng.chance(0.3) ? ["NOT"] : []), "IN", "(", ...items.flatMap((item, i) => (i === 0 ? [item] : [",", item])), ")"];
    }
    case "like": {
      const escape = rng.chance(0.3) ? ["ESCAPE", rng.pick(["'\\'", "'!'", "'%'", "''", "'ab'", "'é'", "'_'"])] : [];
      return [...sub(), ...(rng.chance(0.3) ? ["NOT"] : []), "LIKE", rng.chance(0.7) ? pattern(rng) : sub().join(" "), ...escape];
    }
    case "glob":
      return [...sub(), ...(rng.chance(0.3) ? ["NOT"] : []), "GLOB", rng.chance(0.7) ? pattern(rng) : sub().join(" ")];
    case "isnull":
      return [...sub(), "IS", ...(rng.chance(0.5) ? ["NOT"] : []), "NULL"];
    case "is":
      return [...sub(), "IS", ...(rng.chance(0.5) ? ["NOT"] : []), ...sub()];
    case "cast":
      return ["CAST", "(", ...sub(), "AS", rng.chance(0.9) ? rng.pick(CAST_TYPES) : rng.pick(ODD_CAST_TYPES), ")"];
    default:
      return functionCall(rng, table, depth);
  }
}

function functionCall(rng: Random, table: FuzzTable, depth: number): Tokens {
  const name = rng.pick(Object.keys(ALLOWED_FUNCTIONS));
  const arity = ALLOWED_FUNCTIONS[name]!;
  const count = rng.int(arity.min, arity.max ?? arity.min + 3);
  const args: Tokens[] = [];
  for (let i = 0; i < count; i++) {
    if ((name === "strftime" && i === 0) || (["date", "time", "datetime", "julianday", "unixepoch", "strftime"].includes(name) && i > 1 && rng.chance(0.7))) {
      args.push([quote(name === "strftime" && i === 0 ? strftimeFormat(rng) : rng.pick(DATE_MODIFIERS))]);
    } else {
      args.push(expression(rng, table, depth - 1));
    }
  }
  return [rng.chance(0.1) ? name.toUpperCase() : name, "(", ...args.flatMap((arg, i) => (i === 0 ? arg : [",", ...arg])), ")"];
}

export function strftimeFormat(rng: Random): string {
  const parts = Array.from({ length: rng.int(1, 6) }, () => (rng.chance(0.8) ? rng.pick(STRFTIME_FORMATS) : rng.unicode(2)));
  const format = parts.join(rng.pick(["", "-", " ", "T"]));
  return rng.chance(0.05) ? format.repeat(rng.int(10, 200)) : format;
}

export function pattern(rng: Random): string {
  const pieces = ["%", "_", "a", "item-", "[a-z]", "[^0-9]", "*", "?", "\\", "!", "%%", "[", "]", "é", "\u0000", "^", "[]]"];
  return quote(Array.from({ length: rng.int(0, 8) }, () => rng.pick(pieces)).join(""));
}

/** A string literal of `text`, quotes doubled as SQL wants. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A literal SQLite reads as one: numbers (some at the edges of int64 and double), strings, blobs, NULL, booleans. */
export function literal(rng: Random): string {
  return rng.weighted<() => string>([
    [4, () => String(rng.int(-5, 250))],
    [1, () => rng.pick(["9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616", "0", "00001", "1e308", "1e999", "-1e999", "4.9e-324", "1e-400", "2.5e-1", ".5", "5.", "0.0", "1E+2"])],
    [1, () => rng.pick(["0x0", "0x7fffffffffffffff", "0x8000000000000000", "0xffffffffffffffff", "0xaBc"])],
    [3, () => quote(rng.pick(["alpha", "item-1", "a", "b", "", "2026-01-31", "1970-01-01 00:00:00", "béta ✓", "%", "_", "NULL", "1", "-0"]))],
    [1, () => quote(rng.unicode(rng.size(30)).replaceAll("\u0000", ""))],
    [1, () => `X'${rng.string(2 * rng.size(8), "0123456789abcdefABCDEF")}'`],
    [1, () => rng.pick(["NULL", "TRUE", "FALSE", "null", "true"])],
  ])();
}
