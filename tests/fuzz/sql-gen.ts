/**
 * SQL texts for the fuzzer: valid Simplified SQL (sql-grammar.ts), the same mutated token by token
 * (keywords from SQLite's whole grammar, odd literals, comments, quotes of every kind, deep or
 * unbalanced nesting, long lists, repeated clauses, functions outside the dialect or with the wrong
 * arity, grammar the dialect refuses), known-expensive shapes, and character soup. Generation never
 * looks at a response, so a seed always gives the same texts.
 */
import type { Random } from "./random.ts";
import { CAST_TYPES, ALLOWED_FUNCTIONS, ODD_CAST_TYPES, OTHER_FUNCTIONS, SQLITE_KEYWORDS } from "./sqlite-words.ts";
import { literal, pattern, quote, recase, strftimeFormat, validQuery, type FuzzCatalog, type Tokens } from "./sql-grammar.ts";

export type { FuzzCatalog, FuzzTable } from "./sql-grammar.ts";

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
