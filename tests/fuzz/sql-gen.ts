/**
 * SQL texts for the fuzzer: valid Simplified SQL built from the real catalog (README "Simplified
 * SQL"), the same mutated token by token (keywords from SQLite's whole grammar, odd literals,
 * comments, quotes of every kind, deep or unbalanced nesting, long lists, repeated clauses,
 * functions with the wrong arity, strftime formats, CAST types, LIKE/GLOB/ESCAPE patterns), and
 * character soup. Generation never looks at a response, so a seed always gives the same texts.
 */
import type { Random } from "./random.ts";
import { ALLOWED_FUNCTIONS, CAST_TYPES, DATE_MODIFIERS, ODD_CAST_TYPES, OTHER_FUNCTIONS, SQLITE_KEYWORDS, STRFTIME_FORMATS } from "./sqlite-words.ts";

export interface FuzzTable {
  name: string;
  columns: string[];
  /** Queries on it are paid (per_row or fixed price tags). */
  paid: boolean;
}

export interface FuzzCatalog {
  tables: FuzzTable[];
}

type Tokens = string[];

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

/** One SQL text: mostly mutated valid queries, some valid as built, some soup. */
export function sqlText(rng: Random, catalog: FuzzCatalog): { sql: string; kind: string } {
  const kind = rng.weighted<string>([
    [3, "valid"],
    [6, "mutated"],
    [1, "pathological"],
    [1, "soup"],
    [0.5, "unicode"],
  ]);
  switch (kind) {
    case "valid":
      return { sql: validQuery(rng, catalog).join(rng.pick([" ", " ", " ", "\n", "\t", "  "])), kind };
    case "mutated": {
      let tokens = validQuery(rng, catalog);
      const rounds = rng.int(1, 4);
      for (let i = 0; i < rounds; i++) tokens = mutate(rng, tokens, catalog);
      return { sql: join(rng, tokens), kind };
    }
    case "pathological":
      return { sql: pathological(rng, catalog), kind };
    case "soup":
      return { sql: soup(rng, catalog), kind };
    default:
      return { sql: rng.unicode(rng.size(200)), kind };
  }
}

/** Tokens joined by whitespace, now and then by odd whitespace, comments, or nothing. */
export function join(rng: Random, tokens: Tokens): string {
  let out = "";
  tokens.forEach((token, i) => {
    if (i > 0) {
      out += rng.weighted<string>([
        [30, " "],
        [1, "\t"],
        [1, "\n"],
        [1, "\r\n"],
        [0.5, "\f"],
        [0.5, "  "],
        [0.5, "/**/"],
        [0.3, " /* c */ "],
        [0.2, "\u00a0"],
        [0.2, "\u000b"],
        [0.3, ""],
      ]);
    }
    out += token;
  });
  return out;
}

function recase(rng: Random, token: string): string {
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

function strftimeFormat(rng: Random): string {
  const parts = Array.from({ length: rng.int(1, 6) }, () => (rng.chance(0.8) ? rng.pick(STRFTIME_FORMATS) : rng.unicode(2)));
  const format = parts.join(rng.pick(["", "-", " ", "T"]));
  return rng.chance(0.05) ? format.repeat(rng.int(10, 200)) : format;
}

function pattern(rng: Random): string {
  const pieces = ["%", "_", "a", "item-", "[a-z]", "[^0-9]", "*", "?", "\\", "!", "%%", "[", "]", "é", "\u0000", "^", "[]]"];
  return quote(Array.from({ length: rng.int(0, 8) }, () => rng.pick(pieces)).join(""));
}

/** A string literal of `text`, quotes doubled as SQL wants. */
function quote(text: string): string {
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

/** Literals SQLite does not read as one literal, or reads otherwise than it looks. */
function oddLiteral(rng: Random): string {
  return rng.pick([
    "1_000", "5abc", "0xffffffffffffffffff", "0XaBc", "0x1p3", "X'abc'", "x''", "0b101", "1e", ".e1", "1.2.3", "NaN", "Infinity", "-Infinity", "'a''b'", "'it''s",
    "'unterminated", '"double"', "`back`", "[bracket]", "$1", "?", "?1", ":name", "@v", "$v", "''''", "'\\'", "X'",
    "0x", "--", "1e+", "+-1", "'\u0000'", "'\u2028'", "'\ud83d'", "9".repeat(400), "0." + "0".repeat(350) + "1",
    `'${"x".repeat(5000)}'`, `X'${"ab".repeat(3000)}'`, "CURRENT_TIMESTAMP", "CURRENT_DATE", "rowid", "_rowid_", "oid",
  ]);
}

/** One change to a token list. */
export function mutate(rng: Random, tokens: Tokens, catalog: FuzzCatalog): Tokens {
  const out = [...tokens];
  const at = () => rng.int(0, out.length);
  const some = () => rng.int(0, Math.max(0, out.length - 1));
  const table = rng.pick(catalog.tables);
  const op = rng.int(0, 19);
  switch (op) {
    case 0:
      if (out.length > 1) out.splice(some(), 1);
      break;
    case 1: {
      const i = some();
      out.splice(i, 0, out[i] ?? "");
      break;
    }
    case 2: {
      const i = some();
      const j = some();
      [out[i], out[j]] = [out[j]!, out[i]!];
      break;
    }
    case 3:
      out.splice(at(), 0, rng.pick(SQLITE_KEYWORDS));
      break;
    case 4:
      out.splice(at(), 0, rng.pick(["(", ")", ",", ";", ".", "*", "=", "<", ">", "||", "-", "+", "/", "%", "~", "&", "|", "<<", ">>", "!", "!=", "->", "->>", "==", "<=>", ":", "{", "}", "\\"]));
      break;
    case 5:
      out.splice(some(), 1, rng.chance(0.5) ? oddLiteral(rng) : literal(rng));
      break;
    case 6: {
      // Deep nesting, balanced or not, around a random stretch.
      const depth = rng.pick([2, 10, 21, 22, 30, 63, 64, 65, 100, 500]);
      const i = some();
      const j = rng.int(i, out.length);
      const close = rng.chance(0.7) ? depth : rng.int(0, depth * 2);
      out.splice(j, 0, ...Array<string>(close).fill(")"));
      out.splice(i, 0, ...Array<string>(depth).fill("("));
      break;
    }
    case 7:
      out.splice(at(), 0, rng.pick(["-- comment\n", "--", "/* c */", "/*", "*/", "/* /* nested */ */", "#", "# x\n", "/**/", "--\r", "-- \u0000"]));
      break;
    case 8: {
      // Quotes of every kind on an identifier, or a stray one.
      const i = some();
      const bare = (out[i] ?? "").replaceAll('"', "");
      out[i] = rng.pick([`\`${bare}\``, `[${bare}]`, `'${bare}'`, `"${bare}`, `${bare}"`, `""${bare}""`, `"${bare}"`, "'", '"', "`", "[", "]"]);
      break;
    }
    case 9: {
      // A clause written twice, or out of order.
      const clause = rng.pick([["LIMIT", "1"], ["OFFSET", "1"], ["WHERE", "1"], ["ORDER", "BY", "1"], ["FROM", table.name], ["SELECT", "*"], ["GROUP", "BY", table.columns[0]!], ["HAVING", "1"]]);
      out.splice(at(), 0, ...clause);
      break;
    }
    case 10: {
      const i = some();
      out[i] = recase(rng, out[i] ?? "");
      break;
    }
    case 11: {
      // A long IN list or OR/|| chain.
      const n = rng.pick([10, 999, 1000, 1001, 1500, 1501]);
      const where = [rng.pick(table.columns), "IN", "(", Array.from({ length: n }, (_, k) => String(k)).join(","), ")"];
      const chain = Array.from({ length: rng.pick([63, 64, 65, 300]) }, (_, k) => `${rng.pick(table.columns)} = ${k}`).join(rng.pick([" OR ", " AND ", " || "]));
      out.splice(at(), 0, ...(rng.chance(0.6) ? where : [chain]));
      break;
    }
    case 12: {
      // Functions outside the dialect, or allowed ones with the wrong number of arguments.
      const name = rng.chance(0.5) ? rng.pick(OTHER_FUNCTIONS) : rng.pick(Object.keys(ALLOWED_FUNCTIONS));
      const args = Array.from({ length: rng.pick([0, 1, 2, 3, 4, 10, 200]) }, () => (rng.chance(0.5) ? rng.pick(table.columns) : literal(rng)));
      const call = [name, "(", ...(rng.chance(0.1) ? ["DISTINCT"] : []), args.join(", "), ")", ...(rng.chance(0.1) ? ["OVER", "(", ")"] : []), ...(rng.chance(0.05) ? ["FILTER", "(", "WHERE", "1", ")"] : [])];
      out.splice(at(), 0, ...call);
      break;
    }
    case 13: {
      // Grammar the dialect refuses: joins, subqueries, set operations, CTEs, other statements.
      const other = rng.pick(catalog.tables).name;
      out.splice(at(), 0, rng.pick([
        `JOIN ${other} ON 1`, `, ${other}`, `UNION SELECT * FROM ${other}`, `(SELECT 1)`, `EXISTS (SELECT * FROM ${other})`,
        `; DROP TABLE ${other}`, `; ATTACH 'x' AS y`, `; PRAGMA query_only=0`, `WITH a AS (SELECT 1)`, `CASE WHEN 1 THEN 2 END`,
        `COLLATE NOCASE`, `INDEXED BY x`, `NOT INDEXED`, `AS t`, `main.${other}`, `temp.${other}`, `sqlite_master`,
        `RETURNING *`, `WINDOW w AS ()`, `GROUP BY 1`, `DISTINCT`, `ALL`, `LIMIT 1, 2`, `LIMIT -1`, `LIMIT 1.5`, `LIMIT ?`,
      ]));
      break;
    }
    case 14: {
      // A piece of another valid query spliced in.
      const donor = validQuery(rng, catalog);
      const i = rng.int(0, donor.length - 1);
      out.splice(at(), 0, ...donor.slice(i, rng.int(i, donor.length)));
      break;
    }
    case 15:
      out.length = rng.int(0, out.length);
      break;
    case 16:
      out.splice(at(), 0, quote(strftimeFormat(rng)));
      break;
    case 17: {
      // CAST to any type name, LIKE/GLOB patterns with escapes.
      const what = rng.pick(table.columns);
      out.splice(at(), 0, ...rng.pick([
        ["CAST", "(", what, "AS", rng.pick([...CAST_TYPES, ...ODD_CAST_TYPES]), ")"],
        [what, "LIKE", pattern(rng), "ESCAPE", rng.pick(["'\\'", "''", "'ab'", "NULL", "1", what])],
        [what, "GLOB", pattern(rng)],
        [what, rng.pick(["MATCH", "REGEXP", "ISNULL", "NOTNULL", "NOT NULL", "IS DISTINCT FROM", "IS NOT DISTINCT FROM"]), literal(rng)],
      ]));
      break;
    }
    case 18: {
      // A nest of one construct: calls, CASTs, NOTs, minus signs, LIKE inside LIKE.
      const depth = rng.pick([5, 16, 22, 63, 64, 65, 200]);
      const [open, close] = rng.pick<[string, string]>([
        ["abs(", ")"], ["CAST(", " AS INTEGER)"], ["NOT ", ""], ["- ", ""], [`${rng.pick(table.columns)} LIKE (`, ")"],
        ["((", "))"], [`${rng.pick(table.columns)} IN (`, ")"], ["coalesce(", ", 1)"], ["replace(", ", 'a', 'aa')"],
      ]);
      out.splice(at(), 0, open.repeat(depth) + rng.pick(table.columns) + close.repeat(rng.chance(0.8) ? depth : rng.int(0, depth)));
      break;
    }
    default:
      out.splice(at(), 0, rng.unicode(rng.int(1, 6)));
      break;
  }
  return out;
}

/** Known-expensive shapes for the parser and for SQLite, with random sizes. */
function pathological(rng: Random, catalog: FuzzCatalog): string {
  const table = rng.pick(catalog.tables);
  const column = rng.pick(table.columns);
  const base = `SELECT ${column} FROM ${table.name} WHERE `;
  const n = rng.pick([8, 16, 20, 22, 24, 40, 64, 65, 100, 1000]);
  return rng.pick<() => string>([
    () => base + "(".repeat(n) + `(${column} = 1))))))AND` + ")".repeat(n),
    () => base + "(".repeat(n) + `${column} = 1`,
    () => base + "(".repeat(n) + `${column} = 1 AND` + ")".repeat(n),
    () => base + `${column} LIKE (`.repeat(n) + "'a'" + ")".repeat(n),
    () => base + "replace(".repeat(rng.int(1, 5)) + `'x'` + `, 'x', '${"x".repeat(rng.pick([10, 1000, 100000]))}')`.repeat(rng.int(1, 5)) + " = ''",
    () => base + `length(replace(${column}, ${column}, ${column} || ${column})) > 0`,
    () => base + Array(n).fill(`'${"a".repeat(rng.int(1, 1000))}'`).join("||") + " = ''",
    () => base + `${column} IN (${Array.from({ length: rng.pick([1000, 1001, 1499, 1500, 1501]) }, (_, i) => i).join(",")})`,
    () => base + `length(strftime('${"%Y-%m-%dT%H:%M:%f".repeat(rng.pick([10, 100, 1000]))}', ${column})) < 0`,
    () => base + `abs(-9223372036854775808) > 0`,
    () => base + `abs(${column} - 9223372036854775807 - 1) > 0`,
    () => base + `substr(${column}, 1, 9223372036854775807) = ''`,
    () => base + `${column} = '${"x".repeat(rng.pick([16_000, 16_384, 16_400, 20_000]))}'`,
    () => `${base}${column} = '${"é".repeat(rng.pick([5000, 8174, 8200]))}'`,
    () => base + `${column} ${"NOT ".repeat(n)}IN (1)`,
    () => base + "- ".repeat(n * 3) + column + " > 0",
    () => "SELECT " + Array.from({ length: rng.pick([100, 1000, 1600]) }, () => column).join(", ") + ` FROM ${table.name}`,
    () => "SELECT " + Array.from({ length: rng.pick([10, 100]) }, (_, i) => `${column} AS a${i}`).join(", ") + ` FROM ${table.name}`,
    () => `SELECT * FROM ${table.name}` + " LIMIT 1".repeat(rng.int(2, 50)),
    () => `SELECT * FROM ${table.name} ORDER BY ` + Array.from({ length: n }, () => column).join(", "),
  ])();
}

/** Characters and fragments of SQL in random order. */
function soup(rng: Random, catalog: FuzzCatalog): string {
  const table = rng.pick(catalog.tables);
  const alphabet = ["SELECT", "FROM", "WHERE", "*", ",", "(", ")", "'", '"', "`", ";", " ", "--", "/*", "*/", table.name, ...table.columns, "=", "1", "NULL", "%", "\\", "\u0000", "\n", rng.pick(SQLITE_KEYWORDS)];
  return Array.from({ length: rng.size(60) }, () => rng.pick(alphabet)).join(rng.chance(0.5) ? " " : "");
}
