/**
 * The size limits of ARCHITECTURE.md §4 (query bytes, nesting depth, IN list length), the values
 * validateQuery reports (limit, offset, sql), and rowidSql.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BadRequestError } from "../../src/errors.ts";
import { countSql, validateQuery } from "../../src/sql/dialect.ts";
import { CONTINUE_FUNCTION } from "../../src/engines/sqlite/guard.ts";
import { rowidSql } from "../../src/engines/sqlite/rowid.ts";
import { makeFixture, type Fixture } from "./fixture.ts";

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
  // What the query workers define (engines/sqlite/worker.ts); countSql is built on the guarded text.
  fixture.db.function(CONTINUE_FUNCTION, { deterministic: false }, () => 1);
});
afterAll(() => fixture.close());

const W = "SELECT id FROM swaps WHERE ";
const validate = (sql: string, maxQueryBytes = 1 << 20) => validateQuery(sql, fixture.catalog, { maxQueryBytes });

function refusal(sql: string, maxQueryBytes = 1 << 20): string {
  try {
    validate(sql, maxQueryBytes);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${sql}`);
}

/** Validates, then checks the validated SQL returns what SQLite returns for the original. */
function acceptedLikeSqlite(sql: string): void {
  const validated = validate(sql);
  expect(fixture.db.query(validated.sql).values()).toEqual(fixture.db.query(sql).values());
}

describe("maxQueryBytes", () => {
  // Multi-byte characters: 'é' is 2 bytes in UTF-8 but 1 UTF-16 unit, so .length would under-count.
  const query = `${W}note = '${"é".repeat(100)}'`;
  const bytes = Buffer.byteLength(query, "utf8");

  test("a query of exactly the limit is accepted", () => {
    expect(validate(query, bytes).sql).toBe(query);
  });

  test("one byte over is refused, counting UTF-8 bytes", () => {
    expect(query.length).toBeLessThan(bytes - 1);
    expect(refusal(query, bytes - 1)).toBe(`Query is ${bytes} bytes; the server's limit (max_query_bytes) is ${bytes - 1} bytes: shorten the query`);
  });

  test("the size is checked before parsing", () => {
    expect(refusal("SELEC garbage ((((", 5)).toContain("(max_query_bytes) is 5 bytes");
  });
});

describe("nesting depth", () => {
  const parens = (n: number) => `${W}${"(".repeat(n)}id = 1${")".repeat(n)}`;
  const notParens = (n: number) => `${W}${"NOT (".repeat(n)}active${")".repeat(n)}`;
  const calls = (n: number) => `${W}${"abs(".repeat(n)}volume${")".repeat(n)} >= 0`;
  const nots = (n: number) => `${W}${"NOT ".repeat(n)}active`;
  const ors = (n: number) => W + Array.from({ length: n }, (_, i) => `id = ${i}`).join(" OR ");

  test.each([
    ["NOT and parentheses", notParens(32), notParens(33)],
    ["function calls", calls(63), calls(64)],
    ["NOT", nots(64), nots(65)],
    ["an OR chain", ors(64), ors(65)],
  ])("64 levels of %s are accepted, 65 refused", (_, at64, at65) => {
    acceptedLikeSqlite(at64);
    expect(refusal(at65)).toContain("nested deeper than 64 levels");
  });

  test("thousands of parentheses are refused as too deep before parsing, not a crash", () => {
    expect(refusal(parens(5000))).toContain("nested deeper than 64 levels");
  });

  test("parentheses directly inside parentheses: 8 are accepted, 16 multiply the parser's work too much", () => {
    acceptedLikeSqlite(parens(8));
    expect(refusal(parens(16))).toStartWith("Query is too complex to validate: ");
    expect(refusal(parens(16))).toContain("remove redundant parentheses");
  });
});

describe("IN lists", () => {
  const list = (n: number, not = "") => `${W}id ${not}IN (${Array.from({ length: n }, (_, i) => i - 500).join(", ")})`;

  test("1000 items are accepted", () => {
    acceptedLikeSqlite(list(1000));
    acceptedLikeSqlite(list(1000, "NOT "));
  });

  test("1001 items are refused", () => {
    expect(refusal(list(1001))).toBe("IN list has 1001 items; at most 1000 are allowed: split the query");
    expect(refusal(list(1001, "NOT "))).toContain("IN list has 1001 items");
  });
});

describe("what validateQuery reports", () => {
  test.each([
    ["SELECT id FROM swaps", null, null],
    ["SELECT id FROM swaps LIMIT 0", 0, null],
    ["SELECT id FROM swaps LIMIT 3", 3, null],
    ["SELECT id FROM swaps ORDER BY id LIMIT 3 OFFSET 6", 3, 6],
    ["SELECT id FROM swaps LIMIT 9007199254740991 OFFSET 0", 9007199254740991, 0],
  ])("%p has limit %p and offset %p", (sql, limit, offset) => {
    const validated = validate(sql);
    expect(validated.limit).toBe(limit);
    expect(validated.offset).toBe(offset);
  });

  test("sql is the statement alone: no leading comment, no ';', no trailing comment", () => {
    const validated = validate("/* lead */ SELECT id FROM swaps WHERE id < 3 ; -- tail\n");
    expect(validated.sql).toBe("SELECT id FROM swaps WHERE id < 3");
  });

  test("countSql counts the rows the LIMIT and OFFSET leave, without the ORDER BY", () => {
    const validated = validate("SELECT id FROM swaps ORDER BY id LIMIT 3 OFFSET 6");
    expect(countSql(validated)).toBe("SELECT count(*) FROM (SELECT id FROM swaps WHERE arrow402_continue()  LIMIT 3 OFFSET 6)");
    const total = fixture.db.query("SELECT count(*) FROM swaps").values()[0]![0] as number;
    expect(fixture.db.query(countSql(validated)).values()).toEqual([[Math.min(3, total - 6)]]);
  });
});

describe("rowidSql", () => {
  test.each([
    "SELECT pair, price FROM swaps WHERE price > 1 ORDER BY price DESC",
    "SELECT * FROM swaps",
    "SELECT pair AS p FROM swaps ORDER BY p LIMIT 3 OFFSET 1;",
    "SELECT swaps.pair FROM swaps WHERE pair LIKE 'ETH%'",
  ])("%p returns the same rows with the rowid last", (sql) => {
    const validated = validate(sql);
    const withRowid = rowidSql(validated)!;
    expect(withRowid).toContain(", _rowid_");
    const rows = fixture.db.query(withRowid).values();
    expect(rows.map((row) => row.slice(0, -1))).toEqual(fixture.db.query(validated.sql).values());
    // In swaps, `id INTEGER PRIMARY KEY` is the rowid: look each row up by it.
    for (const row of rows) {
      const columns = validated.columns.map((c) => `"${c.column.name}"`).join(", ");
      const byRowid = fixture.db.query(`SELECT ${columns} FROM swaps WHERE id = ?1`).values(row.at(-1) as number);
      expect(byRowid).toEqual([row.slice(0, -1)]);
    }
  });

  test("is null for a view and for a WITHOUT ROWID table", () => {
    expect(rowidSql(validate("SELECT * FROM big_swaps"))).toBeNull();
    expect(rowidSql(validate("SELECT * FROM tokens"))).toBeNull();
  });

  test("uses another rowid name when columns hide _rowid_ and rowid", () => {
    const validated = validate('SELECT "_rowid_", "rowid", val FROM legacy ORDER BY val');
    const withRowid = rowidSql(validated)!;
    expect(withRowid).toBe('SELECT "_rowid_", "rowid", val, oid FROM legacy ORDER BY val');
    const rows = fixture.db.query(withRowid).values();
    expect(rows.map((row) => row.slice(0, -1))).toEqual(fixture.db.query(validated.sql).values());
    // The fixture inserts legacy rows with val equal to their insertion order, i.e. their rowid.
    expect(rows.map((row) => row.at(-1))).toEqual(rows.map((row) => row[2]));
  });
});

describe("list separators (checked before parsing)", () => {
  test("1500 commas are parsed, 1501 are refused without parsing", () => {
    const args = (n: number) => `SELECT id FROM swaps WHERE coalesce(${Array.from({ length: n + 1 }, () => "id").join(", ")}) > 0`;
    expect(() => validate(args(1500))).not.toThrow();
    expect(refusal(args(1501))).toBe("Query has 1501 list items; the limit is 1500: shorten the lists (IN lists take at most 1000 items)");
  });

  test("commas inside string literals do not count", () => {
    expect(() => validate(`SELECT id FROM swaps WHERE note = '${",".repeat(3000)}'`)).not.toThrow();
  });
});
