/**
 * The static bound on strings a WHERE expression builds (src/sql/growth.ts): the bound of each
 * shape, that SQLite never builds more than it on the fixture's rows, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { WhereClause } from "sql-parser-cst";
import { BadRequestError } from "../../src/errors.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { checkStringGrowth, type Bound } from "../../src/sql/growth.ts";
import { parseSelect } from "../../src/sql/parse.ts";
import { makeFixture, type Fixture } from "./fixture.ts";

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => fixture.close());

const W = "SELECT id FROM swaps WHERE ";
const SHORT = { bytes: 32, perValue: 0 };

function boundOf(expr: string): Bound {
  const sql = W + expr;
  const where = parseSelect(sql, 1 << 20).clauses.find((c) => c.type === "where_clause") as WhereClause;
  return checkStringGrowth(where.expr, sql);
}

/** [expression, its bound: bytes + perValue × the longest stored value]. */
const BOUNDS: [string, Bound][] = [
  ["'abc'", { bytes: 3, perValue: 0 }],
  ["'é'", { bytes: 2, perValue: 0 }],
  ["X'0102'", { bytes: 2, perValue: 0 }],
  ["note", { bytes: 0, perValue: 1 }],
  ["swaps.note", { bytes: 0, perValue: 1 }],
  ["(note)", { bytes: 0, perValue: 1 }],
  ["+note", { bytes: 0, perValue: 1 }],
  ["-note", SHORT],
  ["note || pair", { bytes: 0, perValue: 2 }],
  ["'ab' || note || 3", { bytes: 34, perValue: 1 }],
  ["note = 'abc'", SHORT],
  ["replace(note, 'a', 'xyz')", { bytes: 0, perValue: 3 }],
  ["replace(note, 'ab', 'xyz')", { bytes: 0, perValue: 1.5 }],
  ["replace(note, 'abc', 'x')", { bytes: 0, perValue: 1 }],
  ["replace(note, '', 'xyz')", { bytes: 0, perValue: 1 }],
  ["replace(note, pair, 'xyz')", { bytes: 0, perValue: 3 }],
  ["replace('aaaa', 'a', note)", { bytes: 4, perValue: 4 }],
  ["replace('ab', 'a', 'xyz')", { bytes: 6, perValue: 0 }],
  ["upper(replace(note, 'a', 'xy'))", { bytes: 32, perValue: 2 }],
  ["substr(replace(note, 'a', 'xy'), 2)", { bytes: 32, perValue: 2 }],
  ["coalesce(note, 'abcdef', pair || pair)", { bytes: 32, perValue: 2 }],
  ["ifnull(note, replace(note, 'a', 'aaaa'))", { bytes: 32, perValue: 4 }],
  ["strftime('%Y-%m', created_at)", { bytes: 320, perValue: 0 }],
  ["strftime(note, created_at)", { bytes: 320, perValue: 10 }],
  ["CAST(note AS TEXT)", { bytes: 32, perValue: 1 }],
  ["CAST(note AS INTEGER)", SHORT],
  ["length(replace(note, 'a', 'aaaa'))", SHORT],
  ["date(created_at, '+1 day')", SHORT],
];

describe("bounds", () => {
  test.each(BOUNDS)("%s", (expr, bound) => {
    expect(boundOf(expr)).toEqual(bound);
  });

  test.each(BOUNDS)("SQLite builds no more than the bound of %s", (expr) => {
    const bound = boundOf(expr);
    const columns = fixture.catalog.table("swaps")!.columns.map((c) => `max(length(CAST("${c.name}" AS BLOB)))`);
    const longest = Math.max(...(fixture.db.query(`SELECT ${columns.join(", ")} FROM swaps`).values()[0] as number[]));
    const [[built]] = fixture.db.query(`SELECT max(length(CAST((${expr}) AS BLOB))) FROM swaps`).values() as [[number | null]];
    expect(built ?? 0).toBeLessThanOrEqual(bound.bytes + bound.perValue * longest);
  });
});

/** [what, WHERE clause, the message must contain]. */
const REFUSED: [string, string, string][] = [
  [
    "the shape that built 1.8 GB in SQLite from a 3 KB query",
    `length(replace(replace(replace('x','x','${"x".repeat(1000)}'),'x','${"x".repeat(1000)}'),'x','${"x".repeat(900)}')) > 0`,
    "can build a string of 900,000,000 bytes; the limit is 1,000,000: use shorter literals or fewer nested replace()",
  ],
  ["one replace() over the byte limit", `replace('${"a".repeat(2000)}', 'a', '${"b".repeat(501)}') = ''`, "can build a string of 1,002,000 bytes"],
  [
    "|| adds up to over the byte limit",
    `'${"a".repeat(9000)}' || replace('${"a".repeat(100)}', 'a', '${"b".repeat(9920)}') = ''`,
    "can build a string of 1,001,000 bytes",
  ],
  [
    "six nested 4-fold replace() over a column",
    "replace(replace(replace(replace(replace(replace(note, 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa') = ''",
    "can make a string 4,096 times longer than the values it reads; the limit is 1,024",
  ],
  ["strftime() of a grown format", `strftime(replace(note, 'a', '${"%J".repeat(60)}'), created_at) IS NULL`, "can make a string 1,200 times longer"],
  ["a column replaced by a column", "replace(note, 'a', note) = ''", "takes both its text and its replacement from the table, so it can square a value's length: use a literal replacement"],
  ["columns on both sides, through || and upper()", "replace(note || 'x', 'a', upper(pair)) = ''", "takes both its text and its replacement from the table"],
  // Time per row: instr(), replace(), LIKE and GLOB compare their strings at every position.
  [
    "instr() of a built megabyte and a 30,000-byte needle (seconds per row)",
    `instr(replace(replace('x','x','${"x".repeat(1000)}'),'x','${"x".repeat(999)}') || substr(note,1,0), replace(replace('x','x','${"x".repeat(300)}'),'x','${"x".repeat(100)}') || 'q2') > 0`,
    "can compare 29,972,959,366 bytes for every row (instr(), replace(), LIKE and GLOB take time in proportion to the lengths of both their strings)",
  ],
  [
    "LIKE of a built string against a long pattern",
    `replace('${"x".repeat(100)}', 'x', '${"x".repeat(1000)}') LIKE '%${"x".repeat(200)}%'`,
    "can compare 20,200,100 bytes for every row",
  ],
  [
    "many small searches add up (each 810,000 bytes)",
    Array.from({ length: 13 }, () => `instr('${"x".repeat(900)}' || note, '${"x".repeat(900)}') > 0`).join(" OR "),
    "can compare 10,530,000 bytes for every row",
  ],
  ["a column searched for a 100 KB literal", `instr(note, '${"x".repeat(100_001)}') > 0`, "can compare 100,001 bytes for each byte of the values it reads for every row"],
  ["a grown column searched in a column", `instr(replace(note, 'a', '${"a".repeat(17)}'), pair) > 0`, "can compare 17 times the square of the values' length for every row"],
];

describe("refused", () => {
  test.each(REFUSED)("%s", (_, where, message) => {
    let caught: unknown;
    try {
      validateQuery(W + where, fixture.catalog, { maxQueryBytes: 1 << 20 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(BadRequestError);
    expect((caught as Error).message).toContain(message);
  });

  test("searches of ordinary size are accepted", () => {
    for (const where of [
      `instr('${"x".repeat(3000)}' || note, '${"x".repeat(3000)}') > 0`,
      `note LIKE '%${"a".repeat(1000)}%' ESCAPE '!'`,
      "instr(note, pair) > 0 AND note GLOB pair AND replace(note, pair, 'x') <> ''",
    ]) {
      expect(validateQuery(W + where, fixture.catalog, { maxQueryBytes: 1 << 20 }).filtered).toBe(true);
    }
  });

  test("at the limits: a 1,000,000-byte literal build and 1,024-fold growth are accepted", () => {
    for (const where of [
      `replace('${"a".repeat(1000)}', 'a', '${"b".repeat(1000)}') <> ''`,
      "replace(replace(replace(replace(replace(note, 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa') <> ''",
    ]) {
      const validated = validateQuery(W + where, fixture.catalog, { maxQueryBytes: 1 << 20 });
      expect(fixture.db.query(validated.sql).values().length).toBeGreaterThan(0);
    }
  });
});
