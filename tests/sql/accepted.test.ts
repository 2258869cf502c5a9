/**
 * Accepted Simplified SQL (ARCHITECTURE.md §4): each query validates, the SQL it yields returns exactly
 * what SQLite returns for the original text, the output columns are the right catalog columns, and
 * countSql counts the same rows without sorting them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { countSql, validateQuery } from "../../src/sql/dialect.ts";
import { CONTINUE_FUNCTION } from "../../src/engines/sqlite/guard.ts";
import { makeFixture, type Fixture } from "./fixture.ts";
import { ACCEPTED, generatedQueries } from "./corpus.ts";

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
  // As the query workers define it (engines/sqlite/worker.ts): the guarded WHERE calls it for every row.
  fixture.db.function(CONTINUE_FUNCTION, { deterministic: false }, () => 1);
});
afterAll(() => fixture.close());

const LIMITS = { maxQueryBytes: 16384 };

function tableOf(query: string): string {
  return /FROM\s+"?(\w+)/i.exec(query)![1]!.toLowerCase();
}

describe("accepted queries", () => {
  test("there are at least 60", () => expect(ACCEPTED.length).toBeGreaterThanOrEqual(60));

  test.each(ACCEPTED)("%p", (query, expected) => {
    const { db, catalog } = fixture;
    const validated = validateQuery(query, catalog, LIMITS);

    // The executed text is a slice of the validated input, without a trailing ';'.
    expect(query.includes(validated.sql)).toBe(true);
    expect(validated.sql.trimEnd().endsWith(";")).toBe(false);
    expect(validated.table.name).toBe(tableOf(query));

    const direct = db.query(query).values();
    expect(db.query(validated.sql).values()).toEqual(direct);
    // What the workers run: the same rows, the WHERE guarded; without a WHERE, a guard added only
    // to a query that sorts or skips rows (engines/sqlite/guard.ts).
    expect(db.query(validated.runSql).values()).toEqual(direct);
    if (/\bWHERE\b/i.test(query)) expect(validated.runSql).toContain(`${CONTINUE_FUNCTION}() AND (`);
    else if (/\b(ORDER BY|OFFSET)\b/i.test(query)) expect(validated.runSql).toContain(` WHERE ${CONTINUE_FUNCTION}()`);
    else expect(validated.runSql).toBe(validated.sql);
    expect(db.query(countSql(validated)).values()).toEqual([[direct.length]]);
    // A count leaves the ORDER BY out: it never changes the number of rows, and would sort them all.
    if (validated.ordered) expect(validated.countedSql.length).toBeLessThan(validated.runSql.length);
    else expect(validated.countedSql).toBe(validated.runSql);
    const countPlan = db.query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${countSql(validated)}`).all();
    expect(countPlan.map((step) => step.detail).join("; ")).not.toContain("ORDER BY");

    const names =
      expected === "*"
        ? db.query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?1)").all(validated.table.name).map((r) => r.name)
        : expected;
    expect(validated.columns.map((c) => c.name)).toEqual(names.map((n) => n.split("=")[0]!));
    expect(validated.columns.map((c) => c.column.name)).toEqual(names.map((n) => n.split("=").at(-1)!));
    for (const { column } of validated.columns) expect(validated.table.columns).toContain(column);
    // SQLite agrees on how many columns come back.
    expect(db.query(validated.sql).columnNames.length).toBe(validated.columns.length);
  });

  test("the fixture makes most accepted queries return rows (so equality is not vacuous)", () => {
    const nonEmpty = ACCEPTED.filter(([query]) => fixture.db.query(query).values().length > 0);
    expect(nonEmpty.length).toBeGreaterThanOrEqual(ACCEPTED.length * 0.8);
  });
});


describe("SQLite agrees with every query the validator accepts", () => {
  test.each(ACCEPTED)("%p prepares in SQLite as validated", (query) => {
    expect(() => fixture.db.prepare(validateQuery(query, fixture.catalog, LIMITS).sql)).not.toThrow();
  });

  test("generated queries: every accepted one prepares and runs in SQLite, with the rows of the original text", () => {
    let accepted = 0;
    for (const query of generatedQueries(4000, 402)) {
      let validated;
      try {
        validated = validateQuery(query, fixture.catalog, LIMITS);
      } catch (error) {
        expect((error as { status?: number }).status).toBe(400);
        continue;
      }
      accepted++;
      expect({ query, rows: fixture.db.query(validated.sql).values() }).toEqual({ query, rows: fixture.db.query(query).values() });
    }
    expect(accepted).toBeGreaterThan(200);
  }, 60_000);
});
