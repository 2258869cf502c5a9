/**
 * Repeated queries are answered with the bytes of their earlier answer while the data is unchanged
 * (results/result-cache.ts), through a real server: every commit to the file is still seen (rollback
 * journal and WAL), results read by a worker are kept too, each format has its own bytes, and a
 * result over 64 KiB is read anew every time. Hits are read from `/metrics`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { entryOverhead, RESULT_CACHE_BYTES, RESULT_CACHE_ENTRY_BYTES } from "../../src/results/result-cache.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { scrape } from "../ops/support.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";

const queryUrl = (server: RunningServer, sql: string, format?: string) =>
  `${server.url}/api/query?query=${encodeURIComponent(sql)}${format === undefined ? "" : `&format=${format}`}`;

async function answer(server: RunningServer, sql: string, format?: string): Promise<Uint8Array> {
  const response = await fetch(queryUrl(server, sql, format), { headers: { "accept-encoding": "identity" } });
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

const ids = (bytes: Uint8Array) => Array.from(tableFromIPC(bytes).getChild("id")!.toArray() as BigInt64Array, Number);
const hits = async (server: RunningServer) => (await scrape(server.url)).value("arrow402_result_cache_hits_total", {}) ?? Number.NaN;

/** A server over a fresh copy of the types fixture, in the given journal mode, and a writer on the same file. */
async function serverOver(journal: "delete" | "wal"): Promise<{ server: RunningServer; writer: Database }> {
  const dir = tempDir();
  const path = join(dir, "types.sqlite");
  createTypesDatabase(path);
  const writer = new Database(path);
  writer.run(`PRAGMA journal_mode = ${journal}`);
  writer.run("CREATE TABLE wide (id INTEGER PRIMARY KEY, text TEXT)");
  // 100 rows of 1,000 characters: ~100 KB of Arrow, over the size a result is kept at.
  writer.run("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO wide SELECT i, printf('%.*c', 1000, 'x') FROM n");
  const server = await startServer(
    typesConfig(dir, { server: { bind: "127.0.0.1:0", metrics: true }, tables: [{ name: "kinds" }, { name: "wide" }] }),
    { workers: 2 },
  );
  return { server, writer };
}

describe.each(["delete", "wal"] as const)("repeated queries, %s journal", (journal) => {
  let server: RunningServer;
  let writer: Database;
  beforeAll(async () => ({ server, writer } = await serverOver(journal)));
  afterAll(async () => {
    writer.close();
    await server.stop();
  });

  /** Commits (the writer shares this thread with the server, which holds no read transaction on it between requests). */
  async function write(sql: string): Promise<void> {
    writer.run(sql);
  }

  test.each([
    ["a small filtered read", "SELECT id, label FROM kinds WHERE id >= 1"],
    ["a read on a worker", "SELECT id, label FROM kinds ORDER BY label DESC"],
  ])("%s is answered again from the cache, and again from the file after each commit", async (_name, sql) => {
    const first = await answer(server, sql);
    const before = await hits(server);
    expect(await answer(server, sql)).toEqual(first);
    expect(await answer(server, sql)).toEqual(first);
    expect(await hits(server)).toBe(before + 2);
    for (const id of [100, 101]) {
      await write(`INSERT INTO kinds (id, label) VALUES (${id}, 'new ${id}')`);
      const afterCommit = await hits(server);
      expect(ids(await answer(server, sql))).toContain(id);
      expect(await hits(server)).toBe(afterCommit);
    }
    await write("DELETE FROM kinds WHERE id >= 100");
    expect(ids(await answer(server, sql))).not.toContain(100);
  });

  test("each format keeps its own bytes", async () => {
    const sql = "SELECT id, label FROM kinds WHERE id <= 3";
    const arrow = await answer(server, sql);
    const csv = new TextDecoder().decode(await answer(server, sql, "csv"));
    expect(csv.split(/\r?\n/)[0]).toBe("id,label");
    const before = await hits(server);
    expect(new TextDecoder().decode(await answer(server, sql, "csv"))).toBe(csv);
    expect(await answer(server, sql)).toEqual(arrow);
    expect(await hits(server)).toBe(before + 2);
  });

  test("a WHERE that reads the clock is answered from the clock every time, never from the cache", async () => {
    // One row or two, by the parity of the current millisecond: the same text, the same data.
    const sql = "SELECT id FROM kinds WHERE id <= CAST(strftime('%f', 'now') * 1000 AS INTEGER) % 2 + 1";
    const before = await hits(server);
    const seen = new Set<number>();
    for (let i = 0; i < 60 && seen.size < 2; i++) {
      seen.add(ids(await answer(server, sql)).length);
      await Bun.sleep(1);
    }
    expect([...seen].sort()).toEqual([1, 2]);
    expect(await hits(server)).toBe(before);
  });

  test("a result over 64 KiB is read anew every time", async () => {
    const sql = "SELECT id, text FROM wide WHERE id <= 100";
    const first = await answer(server, sql);
    expect(first.byteLength).toBeGreaterThan(RESULT_CACHE_ENTRY_BYTES);
    const before = await hits(server);
    expect(await answer(server, sql)).toEqual(first);
    expect(await hits(server)).toBe(before);
  });
});

describe("what the cache holds is bounded by what its entries cost, not only by their results' bytes", () => {
  let server: RunningServer;
  let writer: Database;
  beforeAll(async () => ({ server, writer } = await serverOver("wal")));
  afterAll(async () => {
    writer.close();
    await server.stop();
  });

  test("empty results of long, distinct texts fill it to its bound, and no further", async () => {
    const gauge = async () => (await scrape(server.url)).value("arrow402_result_cache_bytes", {}) ?? Number.NaN;
    // ~15 KB texts that match no row: 0 bytes of NDJSON each, and ~60 KB of key and query each.
    const padding = "x".repeat(15_000);
    const sql = (n: number) => `SELECT id FROM kinds WHERE id = 0 AND label = '${n}${padding}'`;
    for (let n = 0; n < 320; n++) expect((await answer(server, sql(n), "ndjson")).byteLength).toBe(0);
    const held = await gauge();
    expect(held).toBeLessThanOrEqual(RESULT_CACHE_BYTES);
    expect(held).toBeGreaterThan(RESULT_CACHE_BYTES - 2 * entryOverhead(`ndjson\n${sql(0)}`));
  });
});
