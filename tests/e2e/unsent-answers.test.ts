/**
 * Unpaid answers are bounded per client (DESIGN.md §17), against a real `arrow402 serve` process: a
 * complete answer (one that fits the first response, here ~7 MB: more than the socket's own buffers take) waiting for a client that reads
 * nothing holds that client's place and counts against the server's unsent-bytes budget until it
 * is taken, and is cut after `limits.send_timeout_ms`. 200 such requests from one address get two
 * answers under `max_concurrent_per_client: 2` and 429 for the rest; without a per-client limit,
 * the budget turns the excess away (503) rather than holding it; the server's memory stays bounded.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { residentBytes, type ChildServer } from "../../bench/processes.ts";
import { metricValue } from "../ops/support.ts";
import { tempDir } from "../support/fixtures.ts";
import { serveConfig } from "../support/spawned-server.ts";
import { dechunk, stalledGet } from "../support/stalled-get.ts";

const REQUESTS = 200;
const SQL = "SELECT id, note FROM notes LIMIT 3500";
let dir: string;
let perClient: ChildServer;
let budgeted: ChildServer;

beforeAll(async () => {
  dir = tempDir();
  const db = new Database(join(dir, "notes.sqlite"));
  db.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3500) INSERT INTO notes SELECT x, hex(randomblob(1000)) FROM c");
  db.close();
  const base = { server: { metrics: true }, database: { sqlite: "./notes.sqlite" }, tables: [{ name: "notes" }] };
  perClient = await serveConfig(dir, { ...base, limits: { max_concurrent_per_client: 2, send_timeout_ms: 3_000 } }, "per-client.yaml");
  budgeted = await serveConfig(dir, { ...base, limits: { unsent_budget_mb: 16 } }, "budgeted.yaml");
}, 60_000);
afterAll(async () => {
  await perClient?.stop();
  await budgeted?.stop();
});

const url = (server: ChildServer) => `${server.url}/api/query?query=${encodeURIComponent(SQL)}`;
const statusOf = (raw: Buffer) => Number(raw.subarray(9, 12).toString());

/** The answer's size, read once by a client that reads. */
async function answerBytes(server: ChildServer): Promise<number> {
  const response = await fetch(url(server));
  expect(response.status).toBe(200);
  return (await response.arrayBuffer()).byteLength;
}

/** Sends REQUESTS stalled GETs, waits until the server has answered them all, then reads them. */
async function flood(server: ChildServer) {
  const before = residentBytes(server.pid).rss;
  const stalled = Array.from({ length: REQUESTS }, () => stalledGet(url(server)));
  await Bun.sleep(3_000);
  const grown = residentBytes(server.pid).rss - before;
  const unsent = await metricValue(server.url, "arrow402_unsent_bytes");
  const answers = await Promise.all(stalled.map((get) => get.resume()));
  return { grown, unsent, answers };
}

describe("200 unread complete answers from one address", () => {
  test("under max_concurrent_per_client: 2, two are held and the rest get 429; memory stays bounded", async () => {
    const size = await answerBytes(perClient);
    expect(size).toBeGreaterThan(6_000_000);
    const { grown, answers } = await flood(perClient);
    const statuses = answers.map(statusOf);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(2);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(REQUESTS - 2);
    // Each answer read after the stall is whole (or was cut by the send timeout, never truncated silently).
    for (const raw of answers.filter((raw) => statusOf(raw) === 200)) expect(dechunk(raw).byteLength === size || raw.length < size).toBe(true);
    expect(grown).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);

  test("a held answer not read for send_timeout_ms is cut, and its place is free again", async () => {
    const stalled = [stalledGet(url(perClient)), stalledGet(url(perClient))];
    await Bun.sleep(500);
    expect((await fetch(url(perClient))).status).toBe(429);
    await Bun.sleep(3_500);
    const response = await fetch(url(perClient));
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    await Promise.all(stalled.map((get) => get.resume()));
  }, 30_000);

  test("with no per-client limit, the unsent-bytes budget (16 MB) holds what fits and turns the rest away with 503", async () => {
    const size = await answerBytes(budgeted);
    const { unsent, answers } = await flood(budgeted);
    const statuses = answers.map(statusOf);
    const held = statuses.filter((status) => status === 200).length;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(REQUESTS / 2);
    expect(statuses.filter((status) => status === 503).length).toBe(REQUESTS - held);
    expect(answers.find((raw) => statusOf(raw) === 503)!.toString()).toMatch(/retry-after: 5/i);
    expect(unsent).toBeLessThanOrEqual(16 * 1024 * 1024);
    // Held answers are whole once read.
    for (const raw of answers.filter((raw) => statusOf(raw) === 200)) expect(dechunk(raw).byteLength).toBe(size);
    // Not the process's RSS here: many of the held answers went whole into loopback's socket buffers
    // (and so ended), and what they allocated is garbage the collector has not yet taken back.
    expect(await metricValue(budgeted.url, "arrow402_unsent_bytes")).toBe(0);
  }, 60_000);
});
