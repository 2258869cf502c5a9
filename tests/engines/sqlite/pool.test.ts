/**
 * The worker pool (engines/sqlite/pool.ts): a worker lent to help a bulk scan goes to a waiting interactive
 * query as soon as the borrower gives it back, even when it does so at once; a worker whose job is
 * no longer wanted is taken back without a restart when it stops in time, and replaced when not; a
 * helper not back in time is substituted by a fresh worker and leaves the pool once let go.
 */
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { RECALL_MS, WorkerPool, type WorkerSlot } from "../../../src/engines/sqlite/pool.ts";
import type { FromWorker, RunJob } from "../../../src/engines/sqlite/protocol.ts";
import { tempDir } from "../../support/fixtures.ts";

let pool: WorkerPool | null = null;
afterEach(() => pool?.close());

function database(): string {
  const path = join(tempDir(), "pool.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000) INSERT INTO t SELECT x FROM c");
  db.close();
  return path;
}

test("a helper given back within the reclaim call reaches the interactive query that asked for it", async () => {
  pool = new WorkerPool(database(), 2, 1_000);
  const bulk = await pool.acquire(1_000, "bulk");
  let helper: ReturnType<WorkerPool["lend"]> = null;
  helper = pool.lend(() => pool!.release(helper!));
  expect(helper).not.toBeNull();
  // Both workers are out: the interactive query asks the helper back, and gets it.
  const interactive = await pool.acquire(1_000, "interactive");
  expect(interactive).toBe(helper!);
  pool.release(interactive);
  pool.release(bulk);
});

test("a substituted helper: a fresh worker goes to the waiting query, and the helper leaves the pool when released or replaced", async () => {
  pool = new WorkerPool(database(), 2, 1_000);
  const bulk = await pool.acquire(1_000, "bulk");
  let helper: ReturnType<WorkerPool["lend"]> = null;
  helper = pool.lend(() => pool!.substitute(helper!));
  expect(helper).not.toBeNull();
  const interactive = await pool.acquire(1_000, "interactive");
  expect(interactive).not.toBe(helper!);
  expect(pool.running).toBe(3);
  pool.release(helper!);
  expect(pool.running).toBe(2);
  // A second one, whose borrower fails (replace): its place is taken already, nothing is started.
  let second: ReturnType<WorkerPool["lend"]> = null;
  pool.release(interactive);
  second = pool.lend(() => pool!.substitute(second!));
  const next = await pool.acquire(1_000, "interactive");
  pool.replace(second!);
  expect({ running: pool.running, restarts: pool.restarts }).toEqual({ running: 2, restarts: 0 });
  // The pool still answers: the fresh workers run jobs.
  const received = run(next, 7, "SELECT id FROM t WHERE id <= 3");
  await until(() => received.some((message) => message.type === "done"));
  expect(received.find((message) => message.type === "done")).toMatchObject({ rows: 3 });
  pool.release(next);
  pool.release(bulk);
});

/** Posts a run job of `sql` (one INTEGER column `id`) and collects what the worker sends for it. */
function run(slot: WorkerSlot, id: number, sql: string): FromWorker[] {
  const received: FromWorker[] = [];
  slot.onMessage = (message) => message.id === id && received.push(message);
  const job: RunJob = {
    type: "run", id, sql, countSql: null, countFirst: false, boundSql: null, table: "t",
    columns: [{ name: "id", kind: "int64", nullable: false }], format: "arrow", maxRows: 1_000_000, batchRows: 100, maxBytes: null,
  };
  slot.worker.postMessage(job);
  return received;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await Bun.sleep(5);
}

test("a job nobody wants is stopped and its worker taken back, not restarted; the next job on it runs whole", async () => {
  pool = new WorkerPool(database(), 1, 1_000);
  const slot = await pool.acquire(1_000);
  // Batches of 100 rows and no acks: the worker waits for flow control after a few batches.
  const received = run(slot, 1, "SELECT id FROM t");
  await until(() => received.length > 0);
  pool.recall(slot, 1);
  const again = await pool.acquire(1_000);
  expect({ same: again === slot, worker: again.worker === slot.worker, restarts: pool.restarts }).toEqual({ same: true, worker: true, restarts: 0 });
  // The stop flag was cleared: the next job is not stopped too.
  const next = run(again, 2, "SELECT id FROM t WHERE id <= 50");
  await until(() => next.some((message) => message.type === "done" || message.type === "error"));
  expect(next.map((message) => message.type)).toEqual(["done"]);
  expect(next[0]).toMatchObject({ rows: 50 });
  pool.release(again);
});

test("a job that does not stop within RECALL_MS (inside one SQLite step) has its worker replaced", async () => {
  pool = new WorkerPool(database(), 1, 1_000);
  const slot = await pool.acquire(1_000);
  // One step that takes seconds, with no guarded WHERE and no batch boundary to stop at.
  run(slot, 1, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT max(x) AS id FROM c");
  await Bun.sleep(50);
  const asked = performance.now();
  pool.recall(slot, 1);
  const fresh = await pool.acquire(5_000);
  expect({ restarts: pool.restarts, fresh: fresh.worker !== slot.worker, waited: performance.now() - asked >= RECALL_MS }).toEqual({ restarts: 1, fresh: true, waited: true });
  const next = run(fresh, 2, "SELECT id FROM t WHERE id <= 5");
  await until(() => next.length > 0);
  expect(next[0]).toMatchObject({ type: "done", rows: 5 });
  pool.release(fresh);
});

/** A table whose `n` holds text in the rows listed: a misfit for an Int64 column. */
function misfits(bad: number[]): string {
  const path = join(tempDir(), "misfit.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE misfit (id INTEGER PRIMARY KEY, n INTEGER)");
  const insert = db.prepare("INSERT INTO misfit VALUES (?, ?)");
  db.transaction(() => {
    for (let i = 1; i <= 10_000; i++) insert.run(i, bad.includes(i) ? "seventeen" : i);
  })();
  db.close();
  return path;
}

function stripe(slot: WorkerSlot, id: number): FromWorker[] {
  const received: FromWorker[] = [];
  slot.onMessage = (message) => received.push(message);
  slot.worker.postMessage({
    type: "stripe", id, wait: true, table: "misfit", format: "arrow",
    boundsSql: "SELECT (SELECT min(rowid) FROM misfit), (SELECT max(rowid) FROM misfit)",
    rangeSql: "SELECT id, n FROM misfit WHERE rowid >= ?1 AND rowid <= ?2",
    columns: [{ name: "id", kind: "int64", nullable: false }, { name: "n", kind: "int64", nullable: true }],
  });
  return received;
}

test.each([[[100]], [[100, 5000]]])("a split scan stopped while a range waits for its misfit's rowid query (bad rows %p): nothing of it comes after `stopped`", async (bad) => {
  pool = new WorkerPool(misfits(bad), 1, 1_000);
  const slot = await pool.acquire(1_000);
  const received = stripe(slot, 7);
  await until(() => received.some((message) => message.type === "stripe-ready"));
  // Range 0 meets a misfit and waits for the rowid query, never sent; range 1 is queued behind it.
  slot.worker.postMessage({ type: "range", id: 7, seq: 0, lo: 1n, hi: 4096n });
  slot.worker.postMessage({ type: "range", id: 7, seq: 1, lo: 4097n, hi: 8192n });
  await until(() => received.some((message) => message.type === "misfit"));
  const after: string[] = [];
  slot.worker.addEventListener("message", (event: MessageEvent<FromWorker>) => after.push(`${event.data.type}:${event.data.id}`));
  pool.recall(slot, 7);
  const again = await pool.acquire(1_000);
  await Bun.sleep(100); // anything late would have arrived
  expect({ after, restarts: pool.restarts, same: again.worker === slot.worker }).toEqual({ after: ["stopped:7"], restarts: 0, same: true });
  // The next stripe on it reads its range.
  const next = stripe(again, 8);
  await until(() => next.some((message) => message.type === "stripe-ready"));
  again.worker.postMessage({ type: "range", id: 8, seq: 0, lo: 1n, hi: 50n });
  await until(() => next.some((message) => message.type === "range-done" || message.type === "error"));
  expect(next.map((message) => message.type)).toEqual(["stripe-ready", "range-done"]);
  pool.release(again);
});
