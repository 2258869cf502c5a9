/**
 * createQueryValidator (src/sql/validator.ts) with real validation workers: results re-linked to
 * the catalog's own objects, refusals as 400s, cache hits without a worker, a deadline that
 * terminates and replaces an overrunning worker, and bounded waiting (503).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BadRequestError, ServerBusyError } from "../../src/errors.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { createQueryValidator, type QueryValidator } from "../../src/sql/validator.ts";
import { makeFixture, type Fixture } from "./fixture.ts";

let fixture: Fixture;
const opened: QueryValidator[] = [];
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => {
  for (const validator of opened) validator.close();
  fixture.close();
});

function validator(options: Parameters<typeof createQueryValidator>[2] = {}, maxQueryBytes = 16384): QueryValidator {
  const created = createQueryValidator(fixture.catalog, { maxQueryBytes }, options);
  opened.push(created);
  return created;
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("accepted");
}

/** Waits until the validator's workers have started (a short maxWaitMs turns texts away meanwhile). */
async function warmedUp(v: QueryValidator): Promise<QueryValidator> {
  for (;;) {
    try {
      await v.validate("SELECT id FROM swaps");
      return v;
    } catch (error) {
      if (!(error instanceof ServerBusyError)) throw error;
      await Bun.sleep(20);
    }
  }
}

/** An OR chain the pre-checks let through and the parser needs well over 100 ms for (it is then too deep). */
const slowToParse = "SELECT id FROM swaps WHERE " + Array.from({ length: 20_000 }, (_, i) => `id = ${i}`).join(" OR ");

describe("results", () => {
  test("a validated query is the same as validateQuery's, linked to the catalog's own table and columns", async () => {
    const sql = 'SELECT pair AS p, "Fee Rate", id FROM swaps WHERE price > 1 ORDER BY p LIMIT 3 OFFSET 1';
    const query = await validator().validate(sql);
    expect(query).toEqual(validateQuery(sql, fixture.catalog, { maxQueryBytes: 16384 }));
    const swaps = fixture.catalog.table("swaps")!;
    expect(query.table).toBe(swaps);
    expect(query.columns.map((c) => c.column)).toEqual(["pair", "Fee Rate", "id"].map((name) => swaps.columns.find((c) => c.name === name)!));
    for (const { column } of query.columns) expect(swaps.columns).toContain(column);
  });

  test.each([
    ["SELECT count(*) FROM swaps", "Aggregate function 'count'"],
    ["SELECT id FROM swaps LIMIT 1 LIMIT 2", "LIMIT appears more than once"],
    ["SELECT id FROM swaps WHERE ((((((((((((((((id =))))))))))))))))", "too complex to validate"],
    ["SELECT id FROM swaps WHERE (id = 1", "Unbalanced parentheses"],
  ])("%p is refused with a 400", async (sql, message) => {
    const error = await refusal(validator().validate(sql));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toContain(message);
  });
});

describe("the cache", () => {
  test("a repeated text is answered from the cache, without a worker: it still answers after close()", async () => {
    const v = validator();
    const first = await v.validate("SELECT id FROM swaps LIMIT 1");
    v.close();
    expect(await v.validate("SELECT id FROM swaps LIMIT 1")).toBe(first);
    expect((await refusal(v.validate("SELECT pair FROM swaps LIMIT 1"))).message).toContain("SQL validation has stopped");
  });

  test("a new text of a shape validated before is validated here from its template, without a worker", async () => {
    const v = validator();
    const sql = (block: number, pair: string, limit: number) => `SELECT id FROM swaps WHERE volume = ${block} AND pair <> '${pair}' LIMIT ${limit}`;
    await v.validate(sql(1, "x", 10));
    v.close();
    const query = await v.validate(sql(18041666, "it''s", 3));
    expect(query).toEqual(validateQuery(sql(18041666, "it''s", 3), fixture.catalog, { maxQueryBytes: 16384 }));
    expect(query.limit).toBe(3);
    expect(query.table).toBe(fixture.catalog.table("swaps")!);
    // Refused by the same rules, with the same message, as a parsed text.
    const fraction = sql(1, "x", 1.5);
    const error = await refusal(v.validate(fraction));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe("LIMIT must be a non-negative integer literal (e.g. LIMIT 100); got '1.5'");
    expect(() => validateQuery(fraction, fixture.catalog, { maxQueryBytes: 16384 })).toThrow(error.message);
  });

  test("concurrent requests for one new text share one validation", async () => {
    const v = validator();
    const [a, b] = await Promise.all([v.validate("SELECT pair FROM swaps LIMIT 5"), v.validate("SELECT pair FROM swaps LIMIT 5")]);
    expect(a).toBe(b);
  });

  test("refusals are not cached: each repeat is refused again", async () => {
    const v = validator();
    for (let i = 0; i < 2; i++) expect(await refusal(v.validate("SELECT total(price) FROM swaps"))).toBeInstanceOf(BadRequestError);
  });
});

describe("the deadline", () => {
  test("a validation still running at its deadline is a 400, and its worker is replaced", async () => {
    // Room to wait while a replacement worker starts (it loads the parser: ~100 ms, more on a busy machine).
    const v = await warmedUp(validator({ workers: 1, timeoutMs: 50, maxWaitMs: 10_000 }, 1 << 20));
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const error = await refusal(v.validate(slowToParse + " ".repeat(i)));
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error.message).toBe(
        "Query is too complex to validate within 50 ms: simplify it (fewer nested parentheses, function calls and LIKE patterns)",
      );
      expect(performance.now() - started).toBeLessThan(1000);
    }
    // The only worker was terminated twice; its replacement validates.
    expect((await v.validate("SELECT pair FROM swaps LIMIT 7")).limit).toBe(7);
  });
});

describe("bounded waiting", () => {
  test("a text that cannot get a worker within maxWaitMs is turned away with 503", async () => {
    const v = await warmedUp(validator({ workers: 1, timeoutMs: 5000, maxWaitMs: 30 }, 1 << 20));
    const slow = refusal(v.validate(slowToParse));
    const error = await refusal(v.validate("SELECT id FROM swaps LIMIT 3"));
    expect(error).toBeInstanceOf(ServerBusyError);
    expect(error.message).toBe("All 1 SQL validators stayed busy for 30 ms: retry shortly");
    // The slow text itself is refused by the validator (too deep), not by the wait.
    expect((await slow).message).toContain("nested deeper than 64 levels");
  });

  test("with no room to wait, a text is turned away at once", async () => {
    const v = await warmedUp(validator({ workers: 1, maxWaiting: 0 }, 1 << 20));
    const slow = refusal(v.validate(slowToParse));
    expect(await refusal(v.validate("SELECT id FROM swaps LIMIT 4"))).toBeInstanceOf(ServerBusyError);
    await slow;
  });

  test("waiting texts are validated in turn when a worker frees up", async () => {
    const v = await warmedUp(validator({ workers: 1 }));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => v.validate(`SELECT id FROM swaps LIMIT ${i}`)));
    expect(results.map((q) => q.limit)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});
