/**
 * A query without a WHERE can still keep SQLite busy in one call: an ORDER BY that no index
 * serves reads and sorts every row before the first comes out, and OFFSET skips rows that never
 * come out. Past query_timeout_ms its worker must stop within a row (engines/sqlite/guard.ts), not burn a
 * core until the sort ends.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tableFromIPC } from "apache-arrow";
import { startServer, type RunningServer } from "../../src/server.ts";
import { typesConfig, typesDatabaseWithBigTable } from "../support/fixtures.ts";
import { busiestThread, threadCpuSeconds } from "../support/thread-cpu.ts";

const ROWS = 1_000_000;
let server: RunningServer;

beforeAll(async () => {
  // No index on k: ORDER BY k sorts the whole table (~0.6 s for 1M rows on an idle machine).
  const { dir, db } = typesDatabaseWithBigTable(ROWS, { table: "unsorted", column: "k", bytes: 16 });
  db.close();
  server = await startServer(typesConfig(dir, { tables: [{ name: "unsorted" }], limits: { query_timeout_ms: 100 } }), { workers: 1 });
});
afterAll(async () => {
  await server.stop();
});

const query = (sql: string) => fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`);

test("a sort without a WHERE, stopped at query_timeout_ms, stops using the CPU", async () => {
  // Threads that exist before the query: the worker that will sort is one of them; the worker that
  // replaces it (whose start-up takes the CPU of a few hundred milliseconds on a loaded machine) is not.
  const before = threadCpuSeconds();
  const res = await query(`SELECT id FROM unsorted ORDER BY k LIMIT 10 OFFSET ${ROWS - 100}`);
  expect(res.status).toBe(400);
  expect(await res.text()).toContain("longer than the 100 ms limit");
  // Unguarded, the stopped worker would go on reading and sorting the table (~0.5 s of CPU on an idle
  // machine, more than a second of wall time on a loaded one): no thread that was there before the
  // query may keep a core busy once it has been answered.
  const stopped = threadCpuSeconds();
  await Bun.sleep(600);
  const busiest = busiestThread(
    new Map([...stopped].filter(([tid]) => before.has(tid))),
    threadCpuSeconds(),
  );
  expect(busiest.seconds).toBeLessThan(0.15);

  // The replaced worker answers the next query.
  // (Its first query can pass the 100 ms limit while it warms up on a loaded machine: asked again.)
  let ok = await query("SELECT id FROM unsorted ORDER BY id DESC LIMIT 3 OFFSET 1");
  // Each try that fails replaces the worker again, a second or more on two loaded cores: up to 40 s.
  const until = performance.now() + 40_000;
  while (ok.status === 400 && performance.now() < until) {
    await ok.arrayBuffer();
    // A query sent at once waits, within its 100 ms, for the fresh worker to start (seconds on two
    // loaded cores), is stopped, and its worker replaced again: give the next one time to start.
    await Bun.sleep(1_000);
    ok = await query("SELECT id FROM unsorted ORDER BY id DESC LIMIT 3 OFFSET 1");
  }
  expect(ok.status).toBe(200);
  expect([...tableFromIPC(new Uint8Array(await ok.arrayBuffer())).getChild("id")!].map(Number)).toEqual([ROWS - 1, ROWS - 2, ROWS - 3]);
}, 120_000);
