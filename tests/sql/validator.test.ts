/**
 * createQueryValidator (src/sql/validator.ts) with real validation workers: results re-linked to
 * the catalog's own objects, refusals as 400s, cache hits without a worker, a deadline that
 * terminates and replaces an overrunning worker, and bounded waiting (503).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { BadRequestError, ServerBusyError } from "../../src/errors.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { precheckQuery } from "../../src/sql/precheck.ts";
import type { ValidatedQuery } from "../../src/sql/validated.ts";
import { createQueryValidator, type QueryValidator } from "../../src/sql/validator.ts";
import { makeFixture, type Fixture } from "./fixture.ts";

// Each test starts workers of its own, which load the parser: seconds each on a loaded machine. The
// 60 s that `bun run test` gives every test, also when this file runs alone.
setDefaultTimeout(60_000);

let fixture: Fixture;
const opened: QueryValidator[] = [];
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => {
  for (const validator of opened) validator.close();
  fixture.close();
});

/**
 * A validator over the fixture. Its texts wait for a worker as long as a loaded machine takes to
 * start one (seconds at worst); the tests of bounded waiting set their own limit.
 */
function validator(options: Parameters<typeof createQueryValidator>[2] = {}, maxQueryBytes = 16384): QueryValidator {
  const created = createQueryValidator(fixture.catalog, { maxQueryBytes }, { maxWaitMs: 60_000, ...options });
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

const TOO_COMPLEX_IN_50_MS =
  "Query is too complex to validate within 50 ms: simplify it (fewer nested parentheses, function calls and LIKE patterns)";

let probes = 0;

/**
 * Waits until a worker of `v` validates: it has started (a short maxWaitMs, or no room to wait,
 * turns texts away meanwhile) and a text got through. Each probe is a new text (the comment keeps it
 * out of the cache), so a worker validates it. With a 50 ms deadline, a loaded
 * machine can refuse even a one-line text at the deadline; that worker is then replaced as well, and
 * the next probe waits for its replacement. Any other refusal fails the test.
 */
async function validates(v: QueryValidator, sql = "SELECT id FROM swaps"): Promise<ValidatedQuery> {
  for (let overruns = 0; ; ) {
    try {
      return await v.validate(`${sql} /* probe ${++probes} */`);
    } catch (error) {
      const overran = error instanceof BadRequestError && error.message === TOO_COMPLEX_IN_50_MS;
      if (!(error instanceof ServerBusyError || (overran && ++overruns < 20))) throw error;
      await Bun.sleep(20);
    }
  }
}

async function warmedUp(v: QueryValidator): Promise<QueryValidator> {
  await validates(v);
  return v;
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
    const v = validator({ workers: 1, timeoutMs: 50, maxWaitMs: 10_000 }, 1 << 20);
    for (let i = 0; i < 2; i++) {
      const text = slowToParse + " ".repeat(i);
      // The worker (the first, then the replacement) has started and validates: the time below is
      // the slow text's, not a worker's start.
      await validates(v);
      // Before a worker gets the text, this thread runs its linear checks on it (0.1–0.6 s for 270
      // KB on a loaded machine): timed here on their own, they are taken out of the time below.
      const checking = performance.now();
      precheckQuery(text, 1 << 20);
      const checks = performance.now() - checking;
      const started = performance.now();
      const error = await refusal(v.validate(text));
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error.message).toBe(TOO_COMPLEX_IN_50_MS);
      // Refused at the deadline, not when the parse ends.
      expect(performance.now() - started - checks).toBeLessThan(1000);
    }
    // The only worker was terminated twice; its replacement validates (once it has started, and
    // whatever a loaded machine makes of the 50 ms deadline: see `validates`).
    expect((await validates(v, "SELECT pair FROM swaps LIMIT 7")).limit).toBe(7);
  });
});

describe("bounded waiting", () => {
  test("a text that cannot get a worker within maxWaitMs is turned away with 503", async () => {
    // A deadline well past the slow text's parse, however loaded the machine (1–6 s measured).
    const v = await warmedUp(validator({ workers: 1, timeoutMs: 60_000, maxWaitMs: 30 }, 1 << 20));
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

describe("start-up", () => {
  test("`ready` resolves once the workers can take texts: a text sent then never waits for a worker's start-up", async () => {
    // A wait limit of 1 ms: before its workers are ready, a text would be turned away (503).
    const validator = createQueryValidator(fixture.catalog, { maxQueryBytes: 16_384 }, { maxWaitMs: 1 });
    try {
      await validator.ready;
      const queries = await Promise.all(["SELECT id FROM swaps", "SELECT pair FROM swaps"].map((sql) => validator.validate(sql)));
      expect(queries.map((query) => query.table.name)).toEqual(["swaps", "swaps"]);
    } finally {
      validator.close();
    }
  });
});
