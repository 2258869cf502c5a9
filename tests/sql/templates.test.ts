/**
 * Statements built from the template of a text's shape (src/sql/templates.ts) against the parser
 * itself: for a corpus of valid queries, each kept as a template, many variants of their literals
 * and whitespace (seeded) must be built equal to what sql-parser-cst parses for them, and validate
 * to the same query or be refused with the same message. What never shares a template is listed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { validateQuery, validateStatement } from "../../src/sql/dialect.ts";
import { parseSelect } from "../../src/sql/parse.ts";
import { precheckQuery } from "../../src/sql/precheck.ts";
import { MAX_TEMPLATE_TOKENS, shapeOf, StatementTemplates } from "../../src/sql/templates.ts";
import { makeFixture, type Fixture } from "./fixture.ts";
import { mulberry32 as random } from "../support/random.ts";

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => fixture.close());

const MAX_BYTES = 16384;
const W = "SELECT id FROM swaps WHERE ";

/** Valid queries covering every kind of node a literal can sit in. */
const CORPUS = [
  "SELECT * FROM swaps LIMIT 10",
  "SELECT id, pair FROM swaps LIMIT 5 OFFSET 20",
  "select id from swaps where price > 100 order by id desc limit 3;",
  W + "id <= 10",
  W + "volume = 18041666 LIMIT 10",
  W + "price >= 1.5 AND price < 200.25 OR volume = -5",
  W + "pair = 'ETH/USDC' AND note <> 'x'",
  W + "pair IN ('ETH/USDC', 'BTC/USDC', 'it''s') AND volume NOT IN (1, 2, 3)",
  W + "price BETWEEN 10 AND 200 AND volume NOT BETWEEN 0 AND 5",
  W + "pair LIKE 'ETH%' AND note NOT LIKE '%!%%' ESCAPE '!'",
  W + "pair GLOB 'E*' OR note IS NULL OR note IS NOT 'z'",
  W + "lower(pair) = 'eth/usdc' AND length(note) > 2 AND substr(pair, 1, 3) = 'ETH'",
  W + "abs(volume - 10) * 2 + 1 > 3 AND volume % 7 = 1 AND -volume < 0",
  W + "CAST(price AS INTEGER) = 101 AND coalesce(note, 'none') <> 'x'",
  W + "(price > 100 OR (volume < 50 AND pair <> 'ETH/DAI')) AND NOT active",
  W + "pair || '-' || note = 'ETH/USDC-x'",
  W + "trade_date >= '2024-01-01' AND created_at < '2024-03-01 00:00:00' ORDER BY created_at, id LIMIT 4",
  'SELECT pair AS p, "Fee Rate" FROM swaps WHERE "Fee Rate" > 0.001 ORDER BY p LIMIT 2 OFFSET 1',
  "SELECT symbol, decimals FROM tokens WHERE decimals = 18 AND name <> 'Ether'",
  "SELECT id, pair FROM big_swaps WHERE price > 1000 LIMIT 1",
  W + "volume = 0x10 AND price > 1e2 AND note <> X'0102'",
];

const NUMBERS = ["0", "1", "7", "10", "42", "1000001", "3.5", "0.001", "9223372036854775807", "123456789012345678901234567890", "99999999999999999999.5", "000123"];
const STRINGS = ["''", "'x'", "'it''s'", "''''", "'ETH/USDC'", "'%USD%'", "'é ✓ 中'", "'a\nb'", "'-- not a comment'", "'/* nor this */'", "'); DROP TABLE swaps; --'", `'${"z".repeat(3000)}'`];
const GAPS = [" ", "  ", "\n", "\t", "\r\n  "];


/** `sql` with each plain number and '…' string replaced, and each gap between tokens rewritten. */
function variant(sql: string, next: () => number): string {
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]!;
  const tokens = precheckQuery(sql, MAX_BYTES);
  let out = "";
  let previousEnd = 0;
  for (const token of tokens) {
    if (token.start > previousEnd) out += pick(GAPS);
    const text = sql.slice(token.start, token.end);
    if (token.kind === "number" && /^[0-9]+(\.[0-9]+)?$/.test(text)) out += pick(NUMBERS);
    else if (token.kind === "string" && text.startsWith("'")) out += pick(STRINGS);
    else out += text;
    previousEnd = token.end;
  }
  return out;
}

/** The outcome of validating: the query, or the refusal's message. */
function outcome(validate: () => unknown): unknown {
  try {
    return { query: JSON.parse(JSON.stringify(validate())) };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

describe("a statement built from a template is the parser's statement", () => {
  test.each(CORPUS)("%s, 40 variants", (sql) => {
    const templates = new StatementTemplates();
    templates.remember(sql, precheckQuery(sql, MAX_BYTES), parseSelect(sql, MAX_BYTES));
    expect(templates.size).toBe(1);
    const next = random(sql.length);
    for (let i = 0; i < 40; i++) {
      const text = variant(sql, next);
      const built = templates.instantiate(text, precheckQuery(text, MAX_BYTES));
      expect(built).not.toBeNull();
      expect(built).toEqual(parseSelect(text, MAX_BYTES));
      const expected = outcome(() => validateQuery(text, fixture.catalog, { maxQueryBytes: MAX_BYTES }));
      expect(outcome(() => validateStatement(built!, text, fixture.catalog))).toEqual(expected);
    }
  });

  test("values that decide validation are the new text's: LIMIT, and string growth", () => {
    const templates = new StatementTemplates();
    const seen = "SELECT id FROM swaps WHERE pair || 'x' = 'ETH/USDCx' LIMIT 10";
    templates.remember(seen, precheckQuery(seen, MAX_BYTES), parseSelect(seen, MAX_BYTES));
    const bigLimit = "SELECT id FROM swaps WHERE pair || 'x' = 'ETH/USDCx' LIMIT 1000001";
    const built = templates.instantiate(bigLimit, precheckQuery(bigLimit, MAX_BYTES))!;
    expect(validateStatement(built, bigLimit, fixture.catalog).limit).toBe(1000001);
    const grown = `SELECT id FROM swaps WHERE pair || '${"y".repeat(3000)}' = 'ETH/USDCx' LIMIT 10`;
    const grownBuilt = templates.instantiate(grown, precheckQuery(grown, MAX_BYTES))!;
    expect(outcome(() => validateStatement(grownBuilt, grown, fixture.catalog))).toEqual(outcome(() => validateQuery(grown, fixture.catalog, { maxQueryBytes: MAX_BYTES })));
  });
});

describe("what never shares a template", () => {
  const shape = (sql: string) => shapeOf(sql, precheckQuery(sql, MAX_BYTES));

  test.each([
    ["a comment", W + "id = 1 -- one"],
    ["a block comment", W + "id = /* one */ 1"],
    ["a form feed", W + "id =\f1"],
    ["a vertical tab", W + "id =\v1"],
    [`more than ${MAX_TEMPLATE_TOKENS} tokens`, W + Array.from({ length: 200 }, (_, i) => `id = ${i}`).join(" OR ")],
  ])("a text with %s has no shape", (_name, sql) => {
    expect(shape(sql)).toBeNull();
  });

  test.each([
    ["other numbers than plain decimals", W + "volume = 0x10", W + "volume = 0x20"],
    ["a blob", W + "payload = X'01'", W + "payload = X'02'"],
    ["an identifier", W + "volume = 1", W + "price = 1"],
    ["a keyword's case", W + "volume = 1", "select id FROM swaps WHERE volume = 1"],
    ["whitespace where there was none", W + "volume=1", W + "volume = 1"],
    ["a number for a string", W + "note = 1", W + "note = '1'"],
    ["another operator", W + "volume <= 1", W + "volume < 1"],
  ])("%s: another shape", (_name, a, b) => {
    expect(shape(a)).not.toBeNull();
    expect(shape(a)).not.toBe(shape(b));
    const templates = new StatementTemplates();
    templates.remember(a, precheckQuery(a, MAX_BYTES), parseSelect(a, MAX_BYTES));
    expect(templates.instantiate(b, precheckQuery(b, MAX_BYTES))).toBeNull();
  });

  test("a statement whose positions do not fall on tokens is not kept", () => {
    const sql = W + "volume = 1";
    const statement = parseSelect(sql, MAX_BYTES);
    const shifted = JSON.parse(JSON.stringify(statement).replace(`"range":[0,`, `"range":[1,`));
    const templates = new StatementTemplates();
    templates.remember(sql, precheckQuery(sql, MAX_BYTES), shifted);
    expect(templates.size).toBe(0);
  });

  test("a literal the statement does not hold as a literal node is not kept", () => {
    const sql = W + "volume = 1";
    const statement = JSON.parse(JSON.stringify(parseSelect(sql, MAX_BYTES)).replace(`"type":"number_literal"`, `"type":"identifier"`));
    const templates = new StatementTemplates();
    templates.remember(sql, precheckQuery(sql, MAX_BYTES), statement);
    expect(templates.size).toBe(0);
  });
});
