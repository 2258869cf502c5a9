/**
 * The worker pool's lending (db/pool.ts): a worker lent to help a bulk scan goes to a waiting
 * interactive query as soon as the borrower gives it back, even when it does so at once.
 */
import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { WorkerPool } from "../../src/db/pool.ts";
import { tempDir } from "../support/fixtures.ts";

let pool: WorkerPool | null = null;
afterEach(() => pool?.close());

function database(): string {
  const path = join(tempDir(), "pool.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY)");
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
