/**
 * The neutral statement (src/sql/statement.ts, DESIGN.md §14): validation builds it for every
 * accepted query, as plain JSON data, and it means what the text means: written back as SQLite SQL
 * with every operation parenthesised (statement-sql.ts), it returns the text's rows, for the accepted
 * corpus, for generated queries, and for chains of operators written without parentheses (so the
 * tree has SQLite's precedence). Literals carry SQLite's values; the validation workers build the
 * same statement as validateQuery.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { validateQuery } from "../../src/sql/dialect.ts";
import type { Expr } from "../../src/sql/statement.ts";
import { createQueryValidator } from "../../src/sql/validator.ts";
import { mulberry32 as random } from "../support/random.ts";
import { ACCEPTED, generatedQueries, W } from "./corpus.ts";
import { makeFixture, type Fixture } from "./fixture.ts";
import { statementSql } from "./statement-sql.ts";

setDefaultTimeout(60_000);

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => fixture.close());

const LIMITS = { maxQueryBytes: 16384 };
const validate = (sql: string) => validateQuery(sql, fixture.catalog, LIMITS);

/** The rows of `sql`, or the error SQLite raised. */
function rows(sql: string): unknown {
  try {
    return fixture.db.query(sql).values();
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** The query's rows and the statement's, in order when it sorts, else as a sorted list. */
function sameRows(sql: string): { text: unknown; statement: unknown } {
  const validated = validate(sql);
  const statement = statementSql(validated.statement, validated.table);
  const ordered = validated.statement.orderBy.length > 0 || validated.statement.limit !== null;
  const settle = (value: unknown) => (Array.isArray(value) && !ordered ? value.map((row) => JSON.stringify(row)).sort() : value);
  return { text: settle(rows(sql)), statement: settle(rows(statement)) };
}

describe("the statement of every accepted query", () => {
  test.each(ACCEPTED)("%p", (sql) => {
    const validated = validate(sql);
    // Plain data: JSON keeps it whole.
    expect(JSON.parse(JSON.stringify(validated.statement))).toEqual(validated.statement);
    expect(validated.statement.columns.map((c) => validated.table.columns[c.column])).toEqual(validated.columns.map((c) => c.column));
    expect(validated.statement.columns.map((c) => c.name)).toEqual(validated.columns.map((c) => c.name));
    expect({ limit: validated.statement.limit, offset: validated.statement.offset }).toEqual({ limit: validated.limit, offset: validated.offset });
    const { text, statement } = sameRows(sql);
    expect(statement).toEqual(text);
  });

  test("generated queries: every accepted one's statement returns the text's rows", () => {
    let accepted = 0;
    for (const sql of generatedQueries(4000, 1402)) {
      try {
        validate(sql);
      } catch {
        continue;
      }
      accepted++;
      const { text, statement } = sameRows(sql);
      expect({ sql, rows: statement }).toEqual({ sql, rows: text });
    }
    expect(accepted).toBeGreaterThan(200);
  });
});

/**
 * Operators chained without parentheses: the tree must group them as SQLite does (`<` binds tighter
 * than `=`, NOT looser than comparisons, unary minus tighter than `||`, BETWEEN's AND, ESCAPE...).
 */
function operatorChains(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const atoms = ["id", "volume", "price", "pair", "note", "active", "1", "0", "2", "-1", "2.5", "'ETH%'", "'a'", "NULL", "TRUE", "FALSE", "'10'"];
  const binary = ["=", "==", "!=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||", "AND", "OR", "IS", "IS NOT", "LIKE", "NOT LIKE", "GLOB", "NOT GLOB"];
  const atom = () => `${next() < 0.15 ? pick(["-", "+", "NOT "]) : ""}${pick(atoms)}`;
  return Array.from({ length: count }, () => {
    let expr = atom();
    const length = 1 + Math.floor(next() * 4);
    for (let i = 0; i < length; i++) {
      const shape = next();
      if (shape < 0.1) expr += ` ${pick(["", "NOT "])}BETWEEN ${atom()} AND ${atom()}`;
      else if (shape < 0.2) expr += ` ${pick(["", "NOT "])}IN (${atom().replace(/^NOT /, "")}, ${pick(atoms)})`;
      else if (shape < 0.25) expr = `NOT ${expr}`;
      else expr += ` ${pick(binary)} ${atom()}`;
    }
    return `${W}${expr}`;
  });
}

describe("precedence and grouping are SQLite's", () => {
  test("operators chained without parentheses: the statement returns the text's rows", () => {
    let accepted = 0;
    for (const sql of operatorChains(2000, 77)) {
      try {
        validate(sql);
      } catch {
        continue;
      }
      accepted++;
      const { text, statement } = sameRows(sql);
      expect({ sql, rows: statement }).toEqual({ sql, rows: text });
    }
    expect(accepted).toBeGreaterThan(800);
  });

  const where = (sql: string) => validate(W + sql).statement.where;
  /** swaps' columns in table order (fixture.ts); the table is read after the cases are listed. */
  const SWAPS = ["id", "pair", "price", "volume", "active", "trade_date", "created_at", "payload", "note", "order", "Fee Rate"];
  const column = (name: string): Expr => ({ type: "column", column: SWAPS.indexOf(name) });
  test("the cases name swaps' columns by their positions", () => {
    expect(fixture.catalog.table("swaps")!.columns.map((c) => c.name)).toEqual(SWAPS);
  });

  test.each([
    ["volume = 1 < 2", { type: "binary", op: "=", left: column("volume"), right: { type: "binary", op: "<", left: { type: "integer", value: "1" }, right: { type: "integer", value: "2" } } }],
    ["volume IS 1 >= 2 = 3", { type: "binary", op: "=", left: { type: "binary", op: "IS", left: column("volume"), right: { type: "binary", op: ">=", left: { type: "integer", value: "1" }, right: { type: "integer", value: "2" } } }, right: { type: "integer", value: "3" } }],
    ["pair GLOB 'a' < 2", { type: "glob", not: false, expr: column("pair"), pattern: { type: "binary", op: "<", left: { type: "text", value: "a" }, right: { type: "integer", value: "2" } } }],
    ["NOT volume = 1", { type: "unary", op: "NOT", expr: { type: "binary", op: "=", left: column("volume"), right: { type: "integer", value: "1" } } }],
    ["-volume || 'x'", { type: "binary", op: "||", left: { type: "unary", op: "-", expr: column("volume") }, right: { type: "text", value: "x" } }],
    ["(volume) == 1", { type: "binary", op: "=", left: column("volume"), right: { type: "integer", value: "1" } }],
    ["volume <> 1", { type: "binary", op: "!=", left: column("volume"), right: { type: "integer", value: "1" } }],
    ["active IS TRUE", { type: "truth", not: false, value: true, expr: column("active") }],
    ["active IS NOT (FALSE)", { type: "truth", not: true, value: false, expr: column("active") }],
    ["active IS 1", { type: "binary", op: "IS", left: column("active"), right: { type: "integer", value: "1" } }],
    ["note NOT LIKE 'a!%' ESCAPE '!'", { type: "like", not: true, expr: column("note"), pattern: { type: "text", value: "a!%" }, escape: "!" }],
    ["CAST(id AS int) = 1", { type: "binary", op: "=", left: { type: "cast", expr: column("id"), to: "INTEGER" }, right: { type: "integer", value: "1" } }],
    ["SUBSTRING(pair, 1) = ''", { type: "binary", op: "=", left: { type: "call", name: "substring", args: [column("pair"), { type: "integer", value: "1" }] }, right: { type: "text", value: "" } }],
  ] as [string, Expr][])("%s", (sql, expected) => {
    expect(where(sql)).toEqual(expected);
  });
});

describe("literals carry SQLite's values", () => {
  const literal = (text: string) => {
    const where = validate(`${W}volume = ${text}`).statement.where!;
    return where.type === "binary" ? where.right : where;
  };

  test.each([
    ["9223372036854775807", { type: "integer", value: "9223372036854775807" }, "integer"],
    ["9223372036854775808", { type: "real", value: "9223372036854776000", text: "9223372036854775808" }, "real"],
    ["-9223372036854775808", { type: "integer", value: "-9223372036854775808" }, "integer"],
    ["-(9223372036854775808)", { type: "integer", value: "-9223372036854775808" }, "integer"],
    ["- -9223372036854775808", { type: "unary", op: "-", expr: { type: "integer", value: "-9223372036854775808" } }, "real"],
    ["-0x8000000000000000", { type: "unary", op: "-", expr: { type: "integer", value: "-9223372036854775808" } }, null],
    ["0xFFFFFFFFFFFFFFFF", { type: "integer", value: "-1" }, "integer"],
    ["-0x10", { type: "integer", value: "-16" }, "integer"],
    ["000123", { type: "integer", value: "123" }, "integer"],
    ["5.0", { type: "real", value: "5", text: "5.0" }, "real"],
    ["1e3", { type: "real", value: "1000", text: "1e3" }, "real"],
    ["-0.0", { type: "real", value: "-0", text: "-0.0" }, "real"],
    ["1e999", { type: "real", value: "Infinity", text: "1e999" }, "real"],
    ["X'0aFF'", { type: "blob", hex: "0aff" }, "blob"],
    ["'it''s'", { type: "text", value: "it's" }, "text"],
    ["NULL", { type: "null" }, "null"],
    ["TRUE", { type: "bool", value: true }, "integer"],
  ] as [string, Expr, string | null][])("%s", (text, expected, sqliteType) => {
    expect(literal(text)).toEqual(expected);
    // SQLite's own storage class for the literal (null: SQLite refuses the text).
    const typeOf = rows(`SELECT typeof(${text})`);
    if (sqliteType === null) expect(typeOf).toHaveProperty("error");
    else expect(typeOf).toEqual([[sqliteType]]);
  });

  test("IN lists fold signs into their literals", () => {
    const where = validate(`${W}volume IN (-5, +10, NULL, 2.5, -0x10, -9223372036854775808, 'a')`).statement.where;
    expect(where).toEqual({
      type: "in",
      not: false,
      expr: { type: "column", column: 3 },
      list: [
        { type: "integer", value: "-5" },
        { type: "integer", value: "10" },
        { type: "null" },
        { type: "real", value: "2.5", text: "2.5" },
        { type: "integer", value: "-16" },
        { type: "integer", value: "-9223372036854775808" },
        { type: "text", value: "a" },
      ],
    });
  });

  test("ORDER BY terms: an alias is its column, and NULLS as written", () => {
    const { statement } = validate('SELECT price AS p, id FROM swaps ORDER BY p DESC, "pair" NULLS FIRST, volume ASC NULLS LAST LIMIT 2 OFFSET 1');
    expect(statement.orderBy).toEqual([
      { column: 2, descending: true, nulls: null },
      { column: 1, descending: false, nulls: "first" },
      { column: 3, descending: false, nulls: "last" },
    ]);
    expect(statement.columns).toEqual([{ name: "p", column: 2 }, { name: "id", column: 0 }]);
    expect([statement.limit, statement.offset]).toEqual([2, 1]);
  });
});

describe("every path builds the same statement", () => {
  test("a validation worker and validateQuery", async () => {
    const validator = createQueryValidator(fixture.catalog, LIMITS, { maxWaitMs: 60_000 });
    try {
      const text = (volume: string, pair: string) => `${W}volume = ${volume} AND pair IN ('${pair}', 'x') AND price > 1.5 ORDER BY id LIMIT 3`;
      const first = text("1", "ETH/USDC");
      expect((await validator.validate(first)).statement).toEqual(validate(first).statement);
      // Other literals; 2^63 - 1 is not a JS number.
      for (const [volume, pair] of [["9223372036854775807", "it''s"], ["000042", ""], ["18041666", "é ✓"]] as const) {
        const sql = text(volume, pair);
        expect((await validator.validate(sql)).statement).toEqual(validate(sql).statement);
      }
      expect(validate(text("9223372036854775807", "x")).statement.where).toMatchObject({ left: { left: { right: { type: "integer", value: "9223372036854775807" } } } });
    } finally {
      validator.close();
    }
  });
});
