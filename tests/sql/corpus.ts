/**
 * Accepted Simplified SQL over the fixture (fixture.ts), shared by the tests that run it: SQLite
 * agrees with the validator (accepted.test.ts), the neutral statement means what the text means
 * (statement.test.ts), and each engine answers as SQLite does (tests/engines/postgres/differential.test.ts).
 */
import { mulberry32 as random } from "../support/random.ts";

export const W = "SELECT id FROM swaps WHERE ";

/** [query, expected output columns as "name" or "outputName=tableColumn", or "*" for all]. */
export const ACCEPTED: [string, string[] | "*"][] = [
  ["SELECT * FROM swaps", "*"],
  ["SELECT * FROM swaps;", "*"],
  ["select * from SWAPS", "*"],
  ['SELECT * FROM "swaps"', "*"],
  ["SELECT id, pair FROM swaps", ["id", "pair"]],
  ['SELECT "id", "pair" FROM "swaps"', ["id", "pair"]],
  ["SELECT ID, Pair FROM swaps", ["id", "pair"]],
  ['SELECT pair AS p, price AS "Unit Price" FROM swaps', ["p=pair", "Unit Price=price"]],
  // A column may be named up to 4 times; the rowid alias (INTEGER PRIMARY KEY) as often as wanted.
  ["SELECT pair, pair AS a, pair AS b, pair AS c FROM swaps", ["pair", "a=pair", "b=pair", "c=pair"]],
  ["SELECT id, id AS a, id AS b, id AS c, id AS d, id AS e FROM swaps", ["id", "a=id", "b=id", "c=id", "d=id", "e=id"]],
  ["SELECT swaps.id, SWAPS.pair FROM swaps", ["id", "pair"]],
  ['SELECT "swaps"."price" AS px FROM swaps', ["px=price"]],
  ['SELECT "order", "Fee Rate" FROM swaps', ["order", "Fee Rate"]],
  ["SELECT payload, note, active, trade_date, created_at FROM swaps", ["payload", "note", "active", "trade_date", "created_at"]],
  [W + "price > 100", ["id"]],
  [W + "price > 100 -- the big ones\nORDER BY id", ["id"]],
  [W + "price > 100 /* x */ LIMIT 3", ["id"]],
  [W + "(price > 100)OR(volume > 20)ORDER BY id", ["id"]],
  ["SELECT id FROM swaps WHERE(price > 100)", ["id"]],
  [W + "price >= 100 AND volume < 50", ["id"]],
  [W + "pair = 'ETH/USDC' OR pair == 'BTC/USDC'", ["id"]],
  [W + "pair != 'ETH/USDC'", ["id"]],
  [W + "pair <> 'ETH/USDC'", ["id"]],
  [W + "price <= 10", ["id"]],
  [W + "NOT (price > 100)", ["id"]],
  [W + "price IS NULL", ["id"]],
  [W + "price IS NOT NULL", ["id"]],
  [W + "volume IS 10", ["id"]],
  [W + "volume IS NOT 10", ["id"]],
  [W + "price BETWEEN 10 AND 200", ["id"]],
  [W + "price NOT BETWEEN 10 AND 200", ["id"]],
  [W + "id IN (1, 3, 5)", ["id"]],
  [W + "id NOT IN (1, 3, 5)", ["id"]],
  [W + "pair IN ('ETH/USDC', 'BTC/USDC')", ["id"]],
  [W + "volume IN (-5, +10, NULL, 2.5)", ["id"]],
  [W + "payload IN (X'0102', X'FF')", ["id"]],
  [W + "pair LIKE 'ETH%'", ["id"]],
  [W + "pair NOT LIKE '%USDC'", ["id"]],
  [W + "note LIKE '50!%%' ESCAPE '!'", ["id"]],
  [W + "pair NOT LIKE '%!_%' ESCAPE '!'", ["id"]],
  [W + "pair GLOB 'E*'", ["id"]],
  [W + "pair NOT GLOB '*DAI'", ["id"]],
  [W + "price * volume > 1000", ["id"]],
  [W + "price + 1 - 2 / 4 > 3 % 2", ["id"]],
  [W + "-price < -100", ["id"]],
  [W + "+volume = 10", ["id"]],
  [W + "pair || '!' = 'ETH/USDC!'", ["id"]],
  [W + "abs(volume) > 5", ["id"]],
  [W + "round(price, 1) = 101.5 OR round(price) = 10", ["id"]],
  [W + "lower(pair) = 'eth/usdc' AND upper(pair) = 'ETH/USDC'", ["id"]],
  [W + "length(pair) = 8", ["id"]],
  [W + "substr(pair, 1, 3) = 'ETH' OR substring(pair, 1, 3) = 'BTC'", ["id"]],
  [W + "trim(note) = 'y' OR ltrim(note, ' ') = 'y' OR rtrim(note) = 'z'", ["id"]],
  [W + "instr(pair, '/') = 4", ["id"]],
  [W + "replace(pair, '/', '-') = 'ETH-USDC'", ["id"]],
  [W + "coalesce(price, 0) = 0", ["id"]],
  [W + "ifnull(volume, -1) = -1", ["id"]],
  [W + "nullif(volume, 10) IS NULL", ["id"]],
  [W + "date(created_at) = '2024-01-02'", ["id"]],
  [W + "time(created_at) > '12:00:00'", ["id"]],
  [W + "datetime(created_at, '+1 day') > '2024-01-03'", ["id"]],
  [W + "julianday(trade_date) - julianday('2024-01-01') >= 1", ["id"]],
  [W + "unixepoch(created_at) > 1704067200", ["id"]],
  [W + "strftime('%Y', trade_date) = '2024'", ["id"]],
  [W + "CAST(price AS INTEGER) = 101", ["id"]],
  [W + "CAST(volume AS TEXT) = '10' OR CAST(note AS REAL) > 0 OR cast(id as numeric) = 2 OR CAST(id AS INT) = 3", ["id"]],
  [W + "CAST(payload AS BLOB) = X'0102'", ["id"]],
  [W + "payload = X'0102'", ["id"]],
  [W + "active = TRUE OR active IS FALSE", ["id"]],
  [W + "active", ["id"]],
  [W + "(price > 100 OR volume > 20) AND NOT active", ["id"]],
  [W + "round(abs(coalesce(price, 0)) * 2) > 10", ["id"]],
  [W + "id = 0x03", ["id"]],
  [W + "price > 1e2", ["id"]],
  [W + "price > .5", ["id"]],
  [W + "pair = 'it''s'", ["id"]],
  [W + "note = 'café'", ["id"]],
  [W + "pair LIKE lower('ETH%')", ["id"]],
  [W + '"Fee Rate" > 0.001', ["id"]],
  [W + "1 = 1", ["id"]],
  [W + "NULL IS NULL", ["id"]],
  [W + "swaps.price > 100", ["id"]],
  ["SELECT id FROM swaps ORDER BY price", ["id"]],
  ["SELECT id FROM swaps ORDER BY price DESC, id ASC", ["id"]],
  ["SELECT id FROM swaps ORDER BY price NULLS FIRST", ["id"]],
  ["SELECT id FROM swaps ORDER BY price DESC NULLS LAST", ["id"]],
  ["SELECT price AS p FROM swaps ORDER BY p", ["p=price"]],
  ["SELECT id FROM swaps ORDER BY swaps.volume, \"pair\"", ["id"]],
  ['SELECT "order" AS o FROM swaps ORDER BY "order" DESC', ["o=order"]],
  ["SELECT id FROM swaps LIMIT 3", ["id"]],
  ["SELECT id FROM swaps ORDER BY id LIMIT 3 OFFSET 2", ["id"]],
  ["SELECT id FROM swaps LIMIT 0", ["id"]],
  ["SELECT id FROM swaps ORDER BY id LIMIT 2 OFFSET 100", ["id"]],
  ["SELECT id /* the key */ FROM swaps -- trailing comment", ["id"]],
  ["  SELECT id\nFROM swaps\nWHERE price > 1\n;\n", ["id"]],
  ["SELECT symbol, decimals FROM tokens WHERE decimals = 18", ["symbol", "decimals"]],
  ["SELECT * FROM tokens ORDER BY name NULLS FIRST", "*"],
  ["SELECT * FROM big_swaps", "*"],
  ["SELECT pair FROM big_swaps WHERE price > 150 ORDER BY price DESC", ["pair"]],
  ['SELECT "_rowid_", val FROM legacy WHERE val > 1', ["_rowid_", "val"]],
];

/**
 * Queries built from pieces the parser and SQLite might read differently: odd literals and
 * names, refused operators, repeated and reordered clauses, comments and trailing text.
 */
export function generatedQueries(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]!;
  const atoms = [
    "id", "pair", "price", "volume", "note", '"order"', "swaps.id", "1", "-1", "1.5", "1e3", ".5", "0x1F", "1_000", "1ee5", "0x",
    "5abc", "'a'", "''", "'it''s'", "X'0102'", "X'abc'", "x''", "NULL", "TRUE", "'%'", '"id"', "`id`", "[id]", "rowid", "current_date",
  ];
  const operators = [
    "=", "==", "!=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||", "AND", "OR", "IS", "IS NOT", "LIKE", "NOT LIKE",
    "GLOB", "NOT GLOB", "&", "->", "COLLATE", "MATCH", "NOT NULL", "IS DISTINCT FROM",
  ];
  const functions = ["abs", "round", "lower", "upper", "length", "substr", "trim", "instr", "replace", "coalesce", "ifnull", "nullif", "date", "strftime", "random", "count"];
  const expr = (depth: number): string => {
    if (depth <= 0) return pick(atoms);
    switch (Math.floor(next() * 10)) {
      case 0:
        return `(${expr(depth - 1)})`;
      case 1:
        return `${pick(["-", "+", "NOT ", "~"])}${expr(depth - 1)}`;
      case 2:
      case 3:
        return `${expr(depth - 1)} ${pick(operators)} ${expr(depth - 1)}`;
      case 4:
        return `${expr(depth - 1)} ${pick(["", "NOT "])}BETWEEN ${expr(depth - 1)} AND ${expr(depth - 1)}`;
      case 5:
        return `${expr(depth - 1)} ${pick(["", "NOT "])}IN (${[pick(atoms), pick(atoms)].join(", ")})`;
      case 6:
        return `${expr(depth - 1)} LIKE ${expr(depth - 1)} ESCAPE ${pick(["'!'", "''", "'ab'", "id"])}`;
      case 7:
        return `CAST(${expr(depth - 1)} AS ${pick(["INTEGER", "TEXT", "REAL", "BLOB", "DATE", "VARCHAR(3)"])})`;
      default:
        return `${pick(functions)}(${Array.from({ length: Math.floor(next() * 4) }, () => expr(depth - 1)).join(", ")})`;
    }
  };
  return Array.from({ length: count }, () => {
    const clauses: string[] = [];
    if (next() < 0.8) clauses.push(`WHERE ${expr(Math.floor(next() * 4))}`);
    if (next() < 0.3) clauses.push(`ORDER BY ${pick(["id", "p", "1", "id DESC", "id NULLS LAST", "id ASC, pair DESC"])}`);
    if (next() < 0.3) clauses.push(`LIMIT ${pick(["1", "0", "-1", "1 OFFSET 2", "2, 3", "1e2", "(1)"])}`);
    if (next() < 0.1) clauses.push(pick(clauses.length > 0 ? clauses : ["LIMIT 1"]));
    if (next() < 0.05) clauses.reverse();
    const columns = pick(["*", "id", "id, pair", "pair AS p", "id x", "*, id", '"id"', "price AS p, volume AS P"]);
    const table = pick(["swaps", '"swaps"', "swaps AS s", "tokens", "big_swaps"]);
    const tail = next() < 0.1 ? pick([";", " -- c", " /* c */", ";;", "; SELECT 1"]) : "";
    return `SELECT ${columns} FROM ${table} ${clauses.join(" ")}${tail}`;
  });
}
