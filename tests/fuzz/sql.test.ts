/**
 * Fuzzing `GET /api/query` with SQL texts (DESIGN.md §4, §8): valid Simplified SQL from the real
 * catalog, mutated, pathological and random, URL-encoded right and wrong, with odd `Accept` and
 * `Accept-Encoding`, against a server with generous limits and one with tiny ones. Every answer
 * must be a documented one, in time, with its documented shape; no paid table's rows leave
 * without a settlement. Seed and size: ARROW402_FUZZ_SEED, ARROW402_FUZZ_REQUESTS (README, Development).
 */
import { afterAll, beforeAll, test } from "bun:test";
import { startEnvironment, type FuzzEnvironment } from "./environment.ts";
import { acceptEncodingHeader, acceptHeader, queryTarget } from "./http-gen.ts";
import type { FuzzRequest } from "./raw-http.ts";
import { fuzzSettings, share } from "./random.ts";
import { FuzzRun } from "./runner.ts";
import { sqlText } from "./sql-gen.ts";

const settings = fuzzSettings();
const COUNT = share(settings, 0.35);
let env: FuzzEnvironment;

beforeAll(async () => {
  env = await startEnvironment({ process: false });
}, 60_000);
afterAll(() => env?.stop());

test(`SQL texts get documented answers in time, and no paid rows without payment (${COUNT} requests, seed ${settings.seed})`, async () => {
  const run = new FuzzRun("sql", settings, env);
  await run.run(COUNT, (rng) => {
    const { sql, kind } = sqlText(rng, env.catalog);
    const headers: FuzzRequest["headers"] = [];
    if (rng.chance(0.2)) headers.push(["Accept", acceptHeader(rng)]);
    if (rng.chance(0.15)) headers.push(["Accept-Encoding", acceptEncodingHeader(rng)]);
    return {
      kind: `sql/${kind}`,
      server: rng.chance(0.75) ? env.main : env.tight,
      request: { method: rng.chance(0.95) ? "GET" : "HEAD", target: queryTarget(rng, sql), headers },
    };
  });
  console.log(`sql fuzz, seed ${settings.seed}: ${run.summary()}`);
  run.assertClean();
}, 600_000);
