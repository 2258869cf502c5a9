/**
 * Clients that stop reading (ARCHITECTURE.md §11 "Hostile clients"), against a real `arrow402 serve`
 * process: eight connections ask for a large export and then read nothing. Their workers finish
 * into spill files instead of waiting for them, bulk exports never take the last worker, so a
 * small filtered query and GET /api/ are still answered promptly; the server's memory stays
 * bounded, in every output format; and each stalled body is complete once its reader resumes. A
 * HEAD, which reads nothing by definition, does not make the server read the export either.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { bytesRead, residentBytes, type ChildServer } from "../../bench/processes.ts";
import { readParquetIndependently } from "../formats/support.ts";
import { metricValue } from "../ops/support.ts";
import { serveConfig } from "../support/spawned-server.ts";
import { dechunk, stalledGet } from "../support/stalled-get.ts";
import { tempDir } from "../support/fixtures.ts";

const ROWS = 300_000;
const STALLED = 8;
let server: ChildServer;
/** The same data with a short `limits.send_timeout_ms`. */
let impatient: ChildServer;
let dir: string;

beforeAll(async () => {
  dir = tempDir();
  const db = new Database(join(dir, "wide.sqlite"));
  db.run("CREATE TABLE wide (id INTEGER PRIMARY KEY, note TEXT, amount REAL)");
  db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
          INSERT INTO wide SELECT x, hex(randomblob(100)), x * 1.5 FROM c`);
  db.close();
  const config = { server: { metrics: true }, database: { sqlite: "./wide.sqlite" }, tables: [{ name: "wide" }], limits: { query_timeout_ms: 20_000 } };
  server = await serveConfig(dir, config);
  impatient = await serveConfig(dir, { ...config, limits: { ...config.limits, send_timeout_ms: 1_000, max_concurrent_per_client: 1 } }, "impatient.yaml");
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await impatient?.stop();
});

/** `arrow402_spill_bytes` as the server reports it. */
const spillBytes = (url: string) => metricValue(url, "arrow402_spill_bytes");

/**
 * Waits until the stalled responses have been written out: their spill files have stopped growing
 * for a second. What is left then is what the stalled readers cost while they wait.
 */
async function untilWrittenOut(url: string): Promise<number> {
  let last = -1;
  let steady = 0;
  for (let polls = 0; polls < 100 && steady < 4; polls++) {
    const bytes = await spillBytes(url);
    steady = bytes > 0 && bytes === last ? steady + 1 : 0;
    last = bytes;
    await Bun.sleep(250);
  }
  return last;
}

const timed = async (url: string) => {
  const start = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - start };
};

/** Every format, twice: none buffers a whole result for a reader that stalls. */
const FORMATS = ["arrow", "csv", "ndjson", "parquet", "arrow", "csv", "json", "parquet"];

/** The rows of a whole body in a format. */
function rowCount(format: string, body: Uint8Array): number {
  if (format === "arrow") return tableFromIPC(body).numRows;
  if (format === "parquet") return readParquetIndependently(body).numRows;
  const lines = new TextDecoder().decode(body).split("\n").filter((line) => line !== "").length;
  return format === "csv" ? lines - 1 : format === "json" ? lines - 2 : lines;
}

test("eight stalled exports hold no worker a small query needs, keep memory bounded, and complete when read", async () => {
  const exportUrl = (format: string) => `${server.url}/api/query?query=${encodeURIComponent("SELECT id, note, amount FROM wide")}&format=${format}`;
  const before = residentBytes(server.pid).rss;
  const stalled = FORMATS.slice(0, STALLED).map((format) => stalledGet(exportUrl(format)));
  await Bun.sleep(1_500);

  // While they stall (and are still being written out), small queries and discovery are prompt.
  for (let i = 0; i < 3; i++) {
    const small = await timed(`${server.url}/api/query?query=${encodeURIComponent(`SELECT * FROM wide WHERE id <= ${10 + i}`)}`);
    expect(small.status).toBe(200);
    expect(small.ms).toBeLessThan(1_000);
    const discovery = await timed(`${server.url}/api/`);
    expect(discovery.status).toBe(200);
    expect(discovery.ms).toBeLessThan(500);
  }
  // Measured once every export has been written out (on a loaded machine that can take a while):
  // while they run, memory swings with the batches in flight and with when the collector runs.
  const spilled = await untilWrittenOut(server.url);
  expect(spilled).toBeGreaterThan(0);
  const growth = residentBytes(server.pid).rss - before;

  const bodies = await Promise.all(stalled.map((reader) => reader.resume()));
  bodies.forEach((raw, i) => expect(rowCount(FORMATS[i]!, dechunk(raw))).toBe(ROWS));
  // Held in memory for their readers, the eight results would add their whole size (~450 MB) and
  // more; waiting in spill files, each response holds at most the few batches sent ahead of its
  // reader (engines/sqlite/protocol.ts MAX_IN_FLIGHT), whatever the result's size. What else is measured is
  // spilled chunks the collector has not freed yet: 66–170 MB for 225 MB of results, up to ~200 MB
  // for these ~450 MB (24 GiB machine), hence results large enough to tell the two apart.
  const results = bodies.reduce((sum, raw) => sum + raw.byteLength, 0);
  expect(growth).toBeLessThan(results * 0.75);
}, 60_000);

/** The server side's TCP state of the connection from `clientPort` ("01" established), or null once gone (/proc/net/tcp). */
function serverSideState(serverPort: number, clientPort: number): string | null {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const [, local, remote, state] = line.trim().split(/\s+/);
    if (local?.endsWith(hex(serverPort)) && remote?.endsWith(hex(clientPort))) return state!;
  }
  return null;
}

test("a reader that reads nothing for send_timeout_ms is cut: the server closes its connection and frees its query slot, though it never reads again", async () => {
  const url = `${impatient.url}/api/query?query=${encodeURIComponent("SELECT id, note, amount FROM wide")}`;
  const { hostname, port, pathname, search } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  socket.on("error", () => {});
  await new Promise((resolve) => socket.on("connect", resolve));
  socket.write(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  socket.pause(); // and never resumed: the server alone must end it
  await Bun.sleep(300);
  const state = () => serverSideState(Number(port), socket.localPort!);
  expect(state()).toBe("01");
  // Its one query slot (max_concurrent_per_client: 1) is held meanwhile.
  expect((await fetch(`${impatient.url}/api/query?query=${encodeURIComponent("SELECT * FROM wide WHERE id <= 3")}`)).status).toBe(429);
  // Cut after 1 s without a read, closed a second later (FIN-WAIT-1: the kernel keeps what it could
  // not send), however long the client waits: polled for at most 15 s.
  for (let i = 0; i < 150 && state() === "01"; i++) await Bun.sleep(100);
  expect(state()).not.toBe("01");
  expect((await timed(`${impatient.url}/api/query?query=${encodeURIComponent("SELECT * FROM wide WHERE id <= 3")}`)).status).toBe(200);
  socket.destroy();
}, 30_000);

test("a reader that reads nothing for send_timeout_ms is cut: its body ends short", async () => {
  const url = `${impatient.url}/api/query?query=${encodeURIComponent("SELECT id, note, amount FROM wide")}`;
  const complete = (await (await fetch(url)).arrayBuffer()).byteLength;
  const reader = stalledGet(url);
  await Bun.sleep(3_000);
  const raw = await reader.resume();
  expect(raw.byteLength).toBeLessThan(complete);
  // The server is fine afterwards.
  expect((await timed(`${impatient.url}/api/query?query=${encodeURIComponent("SELECT * FROM wide WHERE id <= 3")}`)).status).toBe(200);
}, 30_000);

/** `arrow402_query_workers_restarted_total` as the server reports it. */
const workerRestarts = (url: string) => metricValue(url, "arrow402_query_workers_restarted_total");

test("a HEAD of a large export gets a GET's headers; the read stops at once and keeps its workers", async () => {
  const url = (format: string) => `${server.url}/api/query?query=${encodeURIComponent("SELECT id, note, amount FROM wide")}&format=${format}`;
  const db = new Database(join(dir, "wide.sqlite"), { readonly: true });
  const tableBytes = (db.query("SELECT sum(pgsize) AS bytes FROM dbstat WHERE name = 'wide'").get() as { bytes: number }).bytes;
  db.close();
  for (const [format, encoding] of [["arrow", "identity"], ["csv", "gzip"], ["parquet", "zstd"]] as const) {
    const get = await fetch(url(format), { headers: { "accept-encoding": encoding } });
    await get.body?.cancel();
    await Bun.sleep(250); // the GET's reads stop
    const restarts = await workerRestarts(server.url);
    const before = bytesRead(server.pid);
    const head = await fetch(url(format), { method: "HEAD", headers: { "accept-encoding": encoding } });
    await Bun.sleep(250); // whatever the HEAD still reads
    const read = bytesRead(server.pid) - before;
    expect({ status: head.status, type: head.headers.get("content-type"), coding: head.headers.get("content-encoding"), length: head.headers.get("content-length") }).toEqual({
      status: 200,
      type: get.headers.get("content-type"),
      coding: get.headers.get("content-encoding"),
      length: null, // a streamed GET has none either
    });
    expect(await head.arrayBuffer()).toHaveProperty("byteLength", 0);
    // Left to Bun, the HEAD's body was read (and compressed) whole to count its length: a pass over
    // the table. Now the read stops after its first batches, and its workers are told to stop, not
    // terminated (a restart reads the worker's modules again, several MB per worker).
    expect(read).toBeLessThan(tableBytes / 3);
    expect(await workerRestarts(server.url)).toBe(restarts);
  }
  // The server is fine afterwards: the stopped reads gave their workers back.
  expect((await timed(`${server.url}/api/query?query=${encodeURIComponent("SELECT * FROM wide WHERE id <= 3")}`)).status).toBe(200);
}, 60_000);

test("clients that drop their exports after the first bytes cost a few batches each, and no worker restarts", async () => {
  const exportUrl = `${server.url}/api/query?query=${encodeURIComponent("SELECT id, note, amount FROM wide")}`;
  // A whole-table scan and a rowid range.
  const rangeUrl = `${server.url}/api/query?query=${encodeURIComponent("SELECT id, note, amount FROM wide WHERE id > 10")}`;
  const complete = (await (await fetch(exportUrl, { headers: { "accept-encoding": "identity" } })).arrayBuffer()).byteLength;
  const restarts = await workerRestarts(server.url);
  for (let i = 0; i < 10; i++) {
    // Both kinds of read stop when asked.
    const response = await fetch(i % 2 === 0 ? exportUrl : rangeUrl, { headers: { "accept-encoding": "identity" } });
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
  }
  await Bun.sleep(250);
  expect(await workerRestarts(server.url)).toBe(restarts);
  const again = await fetch(exportUrl, { headers: { "accept-encoding": "identity" } });
  expect((await again.arrayBuffer()).byteLength).toBe(complete);
}, 60_000);
