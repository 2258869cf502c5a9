/**
 * compileForPostgres (src/engines/postgres/compile.ts) without a server: what it writes around the
 * WHERE (names, ORDER BY with explicit NULLS and COLLATE "C", LIMIT, the count), the source types it
 * reads, the refusals (naming the construct and PostgreSQL), and the constructs it flags as able to
 * fail on a value (failsOnData). The meaning of what it writes is checked against real SQLite and
 * PostgreSQL by differential.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileForPostgres, isRefusal, type PostgresQuery } from "../../../src/engines/postgres/compile.ts";
import { postgresColumn } from "../../../src/engines/postgres/columns.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";

let dir: string;
let catalog: Catalog;

/** A SQLite table standing for the PostgreSQL one below (differential-data.ts says how types pair). */
const SQLITE = 'CREATE TABLE t (id INTEGER, "we""ird" TEXT, price REAL, day DATE, at DATETIME, blob BLOB, spot TEXT, amount NUMERIC)';
const TYPES = ["int8", "text", "float8", "date", "timestamp(3) with time zone", "bytea", "point", "numeric(12,2)"];
const TABLE = { schema: "my schema", name: 'odd "name"' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "arrow402-compile-"));
  const path = join(dir, "t.sqlite");
  const writer = new Database(path, { create: true });
  writer.run(SQLITE);
  writer.close();
  const db = openReadOnly(path);
  catalog = readCatalog(db, [{ name: "t", database: "main", source: "t", description: "", columns: {}, priceTags: [] }]).catalog;
  db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function compiled(sql: string): PostgresQuery {
  const result = compileForPostgres(validateQuery(sql, catalog, { maxQueryBytes: 16384 }), TABLE, TYPES);
  if (isRefusal(result)) throw new Error(result.refusal);
  return result;
}

function refusal(sql: string): string {
  const result = compileForPostgres(validateQuery(sql, catalog, { maxQueryBytes: 16384 }), TABLE, TYPES);
  if (!isRefusal(result)) throw new Error(`compiled: ${result.select}`);
  return result.refusal;
}

describe("the statement around the WHERE", () => {
  test("names quoted, the schema's table, SQLite's NULL order and BINARY collation made explicit", () => {
    const { select, count } = compiled('SELECT id, "we""ird" AS w FROM t ORDER BY w DESC, price, id NULLS LAST LIMIT 5 OFFSET 2');
    expect(select).toBe(
      'SELECT "id", "we""ird" FROM "my schema"."odd ""name""" ORDER BY "we""ird" COLLATE "C" DESC NULLS LAST, "price" ASC NULLS FIRST, "id" ASC NULLS LAST LIMIT 5 OFFSET 2',
    );
    // The count leaves the order out, and keeps LIMIT and OFFSET.
    expect(count).toBe('SELECT count(*) FROM (SELECT 1 FROM "my schema"."odd ""name""" LIMIT 5 OFFSET 2) AS counted');
  });

  test("a column of a type with no SQLite counterpart is selected as it is", () => {
    expect(compiled("SELECT * FROM t WHERE id = 1").select).toBe(
      'SELECT "id", "we""ird", "price", "day", "at", "blob", "spot", "amount" FROM "my schema"."odd ""name""" WHERE ("id" = 1::int8)',
    );
    expect(compiled("SELECT id FROM t").count).toBe('SELECT count(*) FROM "my schema"."odd ""name"""');
  });

  test("text literals are E'' strings: the same under any standard_conforming_strings", () => {
    expect(compiled(`SELECT id FROM t WHERE "we""ird" = 'it''s \\ ok'`).select).toContain(`= E'it''s \\\\ ok'::text COLLATE "C"`);
  });

  test("canonical date and timestamp literals compare on the column itself (its index stays usable)", () => {
    expect(compiled("SELECT id FROM t WHERE day >= '2024-01-01'").select).toContain(`("day" >= '2024-01-01'::date)`);
    expect(compiled("SELECT id FROM t WHERE at < '2024-01-01 10:00:00'").select).toContain(`("at" < '2024-01-01 10:00:00+00'::timestamptz)`);
    expect(compiled("SELECT id FROM t WHERE at > '2024-01-01'").select).toContain(`("at" >= '2024-01-01 00:00:00+00'::timestamptz)`);
  });
});

describe("source types", () => {
  test.each([
    ["bigint", "int", false],
    ["integer", "int", true],
    ["int2", "int", true],
    ["double precision", "real", false],
    ["real", "real", false],
    ["numeric(12,2)", "numeric", false],
    ["NUMERIC", "numeric", false],
    ["character varying(20)", "text", false],
    ["uuid", "text", false],
    ["jsonb", "text", false],
    ["boolean", "bool", false],
    ["date", "date", false],
    ["timestamp(6) with time zone", "timestamptz", false],
    ["timestamp without time zone", "timestamp", false],
    ["bytea", "blob", false],
    ["character(3)", null, false],
    ["text[]", null, false],
    ["point", null, false],
  ] as const)("%s", (type, kind, narrow) => {
    const column = postgresColumn("c", type);
    expect(column.class).toBe(kind);
    expect(column.narrow).toBe(narrow);
  });
});

describe("refusals name the construct and PostgreSQL", () => {
  test.each([
    ["SELECT id FROM t WHERE strftime('%j', day) = '001'", /^strftime\('%j'\) .* is not available on tables served from PostgreSQL: only %Y %m %d %H %M %S %% are$/],
    ["SELECT id FROM t WHERE round(price, 2) = 1.5", /^'round\("price", 2\)', round\(\) to 2 decimal places is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE price || '' = '1.5'", /^'"price" \|\| ''' \(\|\|\) on a REAL value is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE spot IS NULL", /^Column "spot" of type point in WHERE is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t ORDER BY spot", /^ORDER BY "spot" \(type point\) is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE date(at, '+1 day') = '2024-01-01'", /^'date\("at", '\+1 day'\)', date\(\) with modifiers is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE date('now') = '2024-01-01'", /date\(\) of text other than 'YYYY-MM-DD' .* is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE id = \"we\"\"ird\"", /text read from the table next to a number is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE \"we\"\"ird\"", /^'"we""ird"' used as a condition is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE amount * 2 > 1", /arithmetic on a NUMERIC column is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE amount = 0.30000000000000004", /more than 15 significant digits is not available on tables served from PostgreSQL/],
    // (A NUL character never gets this far: the validator refuses it.)
    ["SELECT id FROM t WHERE \"we\"\"ird\" = 'a\uD800b'", /^Text with an unpaired UTF-16 surrogate is not available on tables served from PostgreSQL/],
    ["SELECT id FROM t WHERE \"we\"\"ird\" GLOB \"we\"\"ird\"", /with a pattern that is not a literal is not available on tables served from PostgreSQL/],
  ])("%s", (sql, message) => {
    expect(refusal(sql)).toMatch(message);
  });
});

describe("failsOnData: PostgreSQL errors where SQLite has an answer", () => {
  test.each([
    ["id + 1 > 0", /INTEGER result beyond 64 bits/],
    ["-id < 0", /fails to negate -9223372036854775808/],
    ["price * 2 > 0", /REAL result beyond/],
    ["CAST(price AS INTEGER) = 1", /beyond int64/],
    ["id % 3 = 1", null],
    ["id / 3 = 1 AND price / 2 > 1", null],
    ["id / -1 = 1", /INTEGER result beyond 64 bits/],
    ["price / 0.5 > 1", /REAL result beyond/],
    ["id = 1 AND price > 2.5 AND \"we\"\"ird\" LIKE 'a%'", null],
  ])("%s", (where, flag) => {
    const { failsOnData } = compiled(`SELECT id FROM t WHERE ${where}`);
    if (flag === null) expect(failsOnData).toBeNull();
    else expect(failsOnData).toMatch(flag);
  });
});
