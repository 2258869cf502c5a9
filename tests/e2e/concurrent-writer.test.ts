/**
 * The seller updates the data file while the server runs (a rollback-journal file, SQLite's
 * default). Small reads must see each committed change, and a read that meets a writer's lock
 * waits for it on a worker instead of failing or stalling the HTTP thread.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";

let server: RunningServer;
let writer: Database;

beforeAll(async () => {
  const dir = tempDir();
  const path = join(dir, "types.sqlite");
  createTypesDatabase(path);
  server = await startServer(typesConfig(dir, { limits: { query_timeout_ms: 10_000 } }), { workers: 2 });
  // The writer shares this thread with the server, so it must never wait for a lock (the
  // server could not release it meanwhile): the server holds none on this thread between requests.
  writer = new Database(path);
});
afterAll(async () => {
  writer.close();
  await server.stop();
});

// No WHERE, no ORDER BY, a small LIMIT: a provably small read.
const SMALL = "SELECT id, label FROM kinds LIMIT 100";

async function ids(sql = SMALL): Promise<number[]> {
  const res = await fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`);
  expect(res.status).toBe(200);
  const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  return Array.from(table.getChild("id")!.toArray() as BigInt64Array, Number);
}

/** Runs writer statements. */
async function write(...statements: string[]): Promise<void> {
  for (const sql of statements) writer.run(sql);
}

describe("a writer updating the data file", () => {
  test("each committed change reaches small reads", async () => {
    expect(await ids()).toEqual([1, 2, 3, 4]);
    for (const id of [5, 6, 7]) {
      await write(`INSERT INTO kinds (id, label) VALUES (${id}, 'new')`);
      expect(await ids()).toContain(id);
    }
  });

  test("a small read that meets a writer's lock waits for the commit and returns the committed rows", async () => {
    await ids();
    await write("BEGIN EXCLUSIVE", "INSERT INTO kinds (id, label) VALUES (100, 'locked')");
    let answered = false;
    const pending = ids().then((result) => ((answered = true), result));
    // Other requests are still served meanwhile: the HTTP thread is not waiting.
    const discovery = await fetch(`${server.url}/api/`);
    expect(discovery.status).toBe(200);
    await Bun.sleep(100);
    expect(answered).toBe(false);
    writer.run("COMMIT");
    expect(await pending).toContain(100);
  });

  test("a worker query that meets the lock waits too", async () => {
    await write("BEGIN EXCLUSIVE", "INSERT INTO kinds (id, label) VALUES (101, 'locked')");
    const pending = ids("SELECT id FROM kinds WHERE id > 0");
    await Bun.sleep(100);
    writer.run("COMMIT");
    expect(await pending).toContain(101);
  });
});
