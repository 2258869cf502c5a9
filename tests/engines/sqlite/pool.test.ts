/**
 * The worker pool (engines/sqlite/pool.ts): a worker whose job is no longer wanted is taken back
 * without a restart when it stops in time, and replaced when not.
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

/** Posts a run job of `sql` (one INTEGER column `id`) and collects what the worker sends for it. */
function run(slot: WorkerSlot, id: number, sql: string): FromWorker[] {
  const received: FromWorker[] = [];
  slot.onMessage = (message) => message.id === id && received.push(message);
  const job: RunJob = {
    type: "run", id, sql, countSql: null, countFirst: false, boundSql: null, table: "t",
    columns: [{ name: "id", kind: "int64", nullable: false }], format: "arrow", maxRows: 1_000_000, batchRows: 100, maxBytes: null,
    fastNumbers: false,
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
