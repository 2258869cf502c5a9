/**
 * Refused Simplified SQL (ARCHITECTURE.md §4, §8): each query throws BadRequestError (400) with a one-line
 * message that names the construct.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BadRequestError } from "../../src/errors.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { makeFixture, type Fixture } from "./fixture.ts";

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => fixture.close());

const W = "SELECT id FROM swaps WHERE ";

/** [query, text the message must contain]. */
const REJECTED: [string, string][] = [
  // Other statements, several statements, empty queries.
  ["INSERT INTO swaps (id, pair) VALUES (99, 'x')", "Only SELECT statements are allowed; got INSERT"],
  ["UPDATE swaps SET price = 0", "got UPDATE"],
  ["DELETE FROM swaps", "got DELETE"],
  ["DROP TABLE swaps", "got DROP"],
  ["PRAGMA table_info(swaps)", "got PRAGMA"],
  ["ATTACH DATABASE 'other.db' AS other", "got ATTACH"],
  ["EXPLAIN SELECT * FROM swaps", "got EXPLAIN"],
  ["VALUES (1)", "Unsupported clause 'VALUES (1)'"],
  ["CREATE TABLE x (a)", "got CREATE"],
  ["SELECT * FROM swaps; SELECT * FROM tokens", "Several statements"],
  ["SELECT id FROM swaps WHERE price > 1 -- ok\n; DROP TABLE swaps", "Several statements"],
  ["", "Empty query"],
  ["  ;  ", "Empty query"],
  ["-- nothing here", "Empty query"],
  // Several tables, joins, table-valued functions, subqueries, CTEs, compound selects.
  ["SELECT * FROM swaps JOIN tokens", "JOIN is not supported"],
  ["SELECT * FROM swaps, tokens", "JOIN is not supported"],
  ["SELECT * FROM swaps LEFT JOIN tokens ON 1", "JOIN is not supported"],
  ["SELECT * FROM json_each('[1]')", "Table-valued functions"],
  ["SELECT * FROM (SELECT * FROM swaps)", "Subqueries"],
  [W + "id IN (SELECT id FROM swaps)", "Subqueries"],
  [W + "price > (SELECT 1)", "Subqueries"],
  [W + "EXISTS (SELECT 1)", "EXISTS"],
  [W + "NOT EXISTS (SELECT 1 FROM tokens)", "EXISTS"],
  ["WITH s AS (SELECT * FROM swaps) SELECT * FROM s", "WITH"],
  ["SELECT id FROM swaps UNION SELECT id FROM swaps", "UNION is not supported"],
  ["SELECT id FROM swaps UNION ALL SELECT id FROM swaps", "UNION ALL is not supported"],
  ["SELECT id FROM swaps INTERSECT SELECT id FROM swaps", "INTERSECT"],
  ["SELECT id FROM swaps EXCEPT SELECT id FROM swaps", "EXCEPT"],
  // DISTINCT, GROUP BY, HAVING, aggregates, windows, CASE.
  ["SELECT DISTINCT pair FROM swaps", "DISTINCT"],
  ["SELECT ALL pair FROM swaps", "ALL"],
  ["SELECT pair FROM swaps GROUP BY pair", "GROUP BY"],
  ["SELECT pair FROM swaps GROUP BY pair HAVING pair > 'A'", "GROUP BY"],
  ["SELECT count(*) FROM swaps", "Aggregate function 'count'"],
  ["SELECT sum(price) AS s FROM swaps", "Aggregate function 'sum'"],
  [W + "avg(price) > 1", "Aggregate function 'avg'"],
  [W + "max(price, volume) > 1", "Aggregate function 'max'"],
  [W + "MIN(price, 1) > 0", "Aggregate function 'min'"],
  ["SELECT total(price) FROM swaps", "Aggregate function 'total'"],
  ["SELECT group_concat(pair) FROM swaps", "Aggregate function 'group_concat'"],
  ["SELECT row_number() OVER () FROM swaps", "Window functions (OVER)"],
  [W + "abs(id) OVER () > 1", "Window functions (OVER)"],
  ["SELECT id FROM swaps WINDOW w AS ()", "WINDOW"],
  [W + "CASE WHEN active THEN 1 ELSE 0 END = 1", "CASE"],
  ["SELECT CASE WHEN active THEN 1 END AS c FROM swaps", "CASE"],
  // Bound parameters.
  [W + "id = ?", "Bound parameters"],
  [W + "id = ?1", "Bound parameters"],
  [W + "id = :id", "Bound parameters"],
  [W + "id = @id", "Bound parameters"],
  [W + "id = $id", "Bound parameters"],
  [W + "id IN (1, ?)", "Bound parameters"],
  ["SELECT id FROM swaps LIMIT ?", "Bound parameters"],
  // Functions not listed, wrong argument counts.
  [W + "random() > 0", "Function 'random' is not allowed; allowed functions: abs, round"],
  [W + "load_extension('x') IS NULL", "Function 'load_extension' is not allowed"],
  [W + "printf('%d', id) = '1'", "Function 'printf' is not allowed"],
  [W + "sqlite_version() = ''", "Function 'sqlite_version' is not allowed"],
  [W + "constructor(id) = 1", "Function 'constructor' is not allowed"],
  [W + "CURRENT_DATE > trade_date", "Function 'current_date' is not allowed"],
  [W + "abs(id, 1) = 1", "Function 'abs' takes 1 argument; got 2"],
  [W + "replace(pair) = ''", "Function 'replace' takes 3 arguments; got 1"],
  [W + "coalesce(price) = 0", "Function 'coalesce' takes at least 2 arguments; got 1"],
  [W + "abs(DISTINCT id) = 1", "Only plain arguments"],
  [W + "abs(*) = 1", "'*' is only allowed alone"],
  // Unknown tables and columns.
  ["SELECT * FROM nope", "Unknown table 'nope'; available tables: swaps, tokens, big_swaps, legacy"],
  ["SELECT * FROM sqlite_master", "Unknown table 'sqlite_master'"],
  ["SELECT * FROM hidden", "Unknown table 'hidden'"],
  ["SELECT foo FROM swaps", "Unknown column 'foo' in table 'swaps'"],
  [W + "foo = 1", "Unknown column 'foo' in table 'swaps'"],
  ["SELECT id FROM swaps ORDER BY foo", "Unknown column 'foo'"],
  [W + 'pair = "ETH/USDC"', "Unknown column 'ETH/USDC' in table 'swaps' (string literals take single quotes"],
  [W + "rowid = 1", "Unknown column 'rowid'"],
  ["SELECT t.id FROM swaps", "Unknown table 't' in 't.id'"],
  // Select list: expressions, literals, table.*, '*' with more, duplicates, aliases.
  ["SELECT 1 FROM swaps", "not allowed in the select list"],
  ["SELECT id + 1 FROM swaps", "not allowed in the select list"],
  ["SELECT 'x' AS y FROM swaps", "not allowed in the select list"],
  ["SELECT abs(id) AS a FROM swaps", "not allowed in the select list"],
  ["SELECT swaps.* FROM swaps", "'swaps.*' is not supported"],
  ["SELECT *, id FROM swaps", "'*' is only allowed alone"],
  ["SELECT id, id FROM swaps", "Duplicate output column name 'id'"],
  ["SELECT id AS x, pair AS X FROM swaps", "Duplicate output column name 'X'"],
  ["SELECT id x FROM swaps", "Write AS before the alias"],
  // A column named five times: each name reads the value again. A REAL column of a table that is
  // not STRICT may hold text too; only INTEGER PRIMARY KEY and STRICT numbers may repeat.
  ["SELECT pair, pair AS a, pair AS b, pair AS c, pair AS d FROM swaps", "Column 'pair' is named more than 4 times in the select list"],
  ["SELECT price, price AS a, price AS b, price AS c, price AS d FROM swaps", "Column 'price' is named more than 4 times in the select list"],
  ["SELECT decimals, decimals AS a, decimals AS b, decimals AS c, decimals AS d FROM tokens", "Column 'decimals' is named more than 4 times"],
  ["SELECT id, FROM swaps", "Empty item in the select list"],
  // Schema prefixes, aliases and hints on the table.
  ["SELECT id FROM main.swaps", "Schema-qualified table names"],
  ["SELECT main.swaps.id FROM swaps", "Schema-qualified name"],
  ["SELECT id FROM swaps AS s", "Table aliases"],
  ["SELECT id FROM swaps s", "Table aliases"],
  ["SELECT id FROM swaps INDEXED BY swaps_pair", "INDEXED BY"],
  ["SELECT id FROM swaps NOT INDEXED", "NOT INDEXED"],
  // Identifier quoting other than double quotes.
  ["SELECT `id` FROM swaps", "quoted with `"],
  ["SELECT [id] FROM swaps", "quoted with ["],
  ["SELECT id AS 'x' FROM swaps", "quoted with '"],
  ["SELECT id FROM `swaps`", "quoted with `"],
  // LIMIT / OFFSET.
  ["SELECT id FROM swaps LIMIT -1", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT 1.5", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT 1e2", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT 0x10", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT '5'", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT (5)", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT id", "LIMIT must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT 5 OFFSET -1", "OFFSET must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT 5 OFFSET 1 + 1", "OFFSET must be a non-negative integer literal"],
  ["SELECT id FROM swaps LIMIT 2, 3", "LIMIT <offset>, <count> is not supported"],
  ["SELECT id FROM swaps LIMIT 99999999999999999999", "LIMIT 99999999999999999999 is too large"],
  // ORDER BY.
  ["SELECT id FROM swaps ORDER BY pair COLLATE NOCASE", "COLLATE"],
  ["SELECT id FROM swaps ORDER BY 1", "column positions are not supported"],
  // A column sorted by twice: the second term changes nothing, and copies the value again per row.
  ["SELECT id FROM swaps ORDER BY pair, price, PAIR DESC", "ORDER BY sorts by column 'pair' twice"],
  ["SELECT pair AS p FROM swaps ORDER BY p, pair", "ORDER BY sorts by column 'pair' twice"],
  ["SELECT id FROM swaps ORDER BY price * 2", "ORDER BY takes column names or aliases"],
  ["SELECT id FROM swaps ORDER BY abs(price)", "ORDER BY takes column names or aliases"],
  // Operators and expressions outside the grammar.
  [W + "pair = 'a' COLLATE NOCASE", "COLLATE"],
  [W + "pair MATCH 'x'", "MATCH"],
  [W + "pair REGEXP 'x'", "REGEXP"],
  [W + "note -> '$.a' = 1", "JSON operators"],
  [W + "volume & 1 = 1", "Operator '&' is not supported"],
  [W + "volume << 1 = 2", "Operator '<<' is not supported"],
  [W + "~volume = 1", "Operator '~' is not supported"],
  [W + "price ISNULL", "ISNULL"],
  [W + "price NOTNULL", "NOTNULL"],
  [W + "price IS DISTINCT FROM 1", "Operator 'IS DISTINCT FROM' is not supported"],
  [W + "CAST(price AS VARCHAR(10)) = '1'", "CAST to 'VARCHAR(10)' is not supported"],
  [W + "CAST(price AS DATE) = 1", "CAST to 'DATE'"],
  [W + "CAST(price AS DOUBLE PRECISION) = 1", "CAST to 'DOUBLE PRECISION'"],
  [W + "id IN (1, id)", "IN lists take literal values only"],
  [W + "id IN (1 + 1)", "IN lists take literal values only"],
  [W + "id IN swaps", "IN takes a parenthesised list"],
  [W + "(id, price) = (1, 2)", "Row values"],
  [W + "RAISE(IGNORE)", "RAISE"],
  // Text that the parser and SQLite could read differently.
  ["SELECT #x\n id FROM swaps", "'#' comments"],
  [W + "id = 1\0 OR 1", "NUL character"],
  // Syntax errors.
  ["SELECT id FROM swaps WHERE", "SQL syntax error near end of input"],
  ["SELEC id FROM swaps", "SQL syntax error near \"SELEC\" (line 1, column 1)"],
  [W + "(price > 1", "Unbalanced parentheses: the '(' at character 28 is never closed"],
  ["SELECT id FROM", "SQL syntax error"],
  ["SELECT id FROM swaps\nWHERE id = = 1", "(line 2, column"],
  ["SELECT id FROM swaps OFFSET 2", "SQL syntax error"],
  // Clauses the parser accepts repeated or out of order, and SQLite refuses.
  ["SELECT pair FROM swaps LIMIT 31 LIMIT 31 LIMIT 31", "LIMIT appears more than once: write each clause once"],
  ["SELECT price FROM swaps x FROM tokens y FROM big_swaps LIMIT 3", "FROM appears more than once"],
  ["SELECT id FROM swaps FROM swaps", "FROM appears more than once"],
  ["SELECT id FROM swaps WHERE id = 1 WHERE id = 2", "WHERE appears more than once"],
  ["SELECT id FROM swaps ORDER BY id ORDER BY pair", "ORDER BY appears more than once"],
  ["SELECT id WHERE id = 1 FROM swaps", "FROM must come before WHERE: write the clauses in the order SELECT, FROM, WHERE, ORDER BY, LIMIT"],
  ["SELECT id FROM swaps LIMIT 1 WHERE id = 1", "WHERE must come before LIMIT"],
  ["SELECT id FROM swaps LIMIT 1 ORDER BY id", "ORDER BY must come before LIMIT"],
  ["SELECT id FROM swaps ORDER BY id WHERE id = 1", "WHERE must come before ORDER BY"],
  // Literals and names the parser reads and SQLite does not (or reads as something else).
  [W + "id = 1_000", "Unexpected '1_000': numbers take no letters or '_'"],
  [W + "id = 1ee5", "Unexpected '1ee5'"],
  [W + "id = 0x", "Unexpected '0x'"],
  [W + "id=1ORid=2", "Unexpected '1ORid'"],
  [W + "id = 0x10000000000000000", "is not a number SQLite reads"],
  [W + "payload = X'abc'", "odd number of hex digits"],
  [W + "pair LIKE 'a' ESCAPE 'ab'", "ESCAPE takes a string literal of one character"],
  [W + "pair LIKE 'a' ESCAPE ''", "ESCAPE takes a string literal of one character"],
  // Text refused before parsing (precheck.ts).
  [W + "id = 1 /* unterminated", "Unterminated comment starting at character 35"],
  [W + "pair = 'open", "Unterminated string literal"],
  [W + '"pair = 1', "Unterminated quoted identifier"],
  [W + "[pair = 1", "Unterminated [identifier]"],
  [W + "id = 1)", "Unbalanced parentheses: the ')' at character 34 closes nothing"],
  [W + "id IN (1, (2))", "IN lists take literal values only, without parentheses"],
  [W + "id IN (SELECT id FROM (swaps))", "IN lists take literal values only"],
  ["WITH s AS (SELECT 1) SELECT id FROM swaps", "WITH (common table expressions) is not supported"],
  // Strings built by the WHERE clause (growth.ts).
  [
    W + `length(replace(replace(replace('x','x','${"x".repeat(101)}'),'x','${"x".repeat(101)}'),'x','${"x".repeat(101)}')) > 0`,
    "can build a string of 1,030,301 bytes; the limit is 1,000,000",
  ],
  [W + `replace(replace(replace(note, 'a', '${"a".repeat(20)}'), 'a', '${"a".repeat(20)}'), 'a', '${"a".repeat(20)}') = ''`, "can make a string 8,000 times longer"],
  [W + "replace(note, 'a', note) = ''", "takes both its text and its replacement from the table"],
];

describe("rejected queries", () => {
  test("there are at least 60", () => expect(REJECTED.length).toBeGreaterThanOrEqual(60));

  test.each(REJECTED)("%p", (query, expected) => {
    let caught: unknown;
    try {
      validateQuery(query, fixture.catalog, { maxQueryBytes: 16384 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(BadRequestError);
    const message = (caught as BadRequestError).message;
    expect(message).toContain(expected);
    expect(message).not.toContain("\n");
    expect((caught as BadRequestError).status).toBe(400);
  });
});
