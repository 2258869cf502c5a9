/**
 * A paid result is read whole before it is settled, then waits for the settlement and for its
 * buyer (ARCHITECTURE.md §6 step 8, §11 "Hostile clients"). Against a real `arrow402 serve` process
 * and the devnet: past its first 8 MiB it waits in a spill file (the spill gauge counts it), not in
 * the server's memory; it
 * arrives whole when its buyer reads, however long the settlement took; and its file is freed when
 * the buyer never reads (send timeout) or when the payment is refused after the read, or while a
 * read started early was still running.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { spawnServer, type ChildServer } from "../../bench/processes.ts";
import { metricValue } from "../ops/support.ts";
import { PRICES, TOKEN_KEY, defaultTables, usePaidSandbox, type PaidSandbox } from "../support/paid-server.ts";
import { encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";
import { dechunk, stalledGet } from "../support/stalled-get.ts";

const MAIN = `${import.meta.dir}/../../src/main.ts`;
const ROWS = 20_000;
/** Each row's text: 20,000 rows make an 80 MB result. */
const TEXT_BYTES = 4_000;
const RESULT_BYTES = ROWS * TEXT_BYTES;
const FROM = "SELECT id, body FROM bulky";
/** A table sold per query needs a LIMIT within max_rows (DESIGN.md §17). */
const SQL = `${FROM} LIMIT 1000000`;
/** 1,000 rows of 20,000 bytes: a LIMIT 1000 read (run while /verify runs) that spills. */
const WIDE_ROWS = 1_000;
const WIDE_TEXT_BYTES = 20_000;

let sandbox: PaidSandbox;
let server: ChildServer;
/** The same tables with `limits.send_timeout_ms: 1000`. */
let impatient: ChildServer;
/** The same tables with `limits.spill_budget_mb: 1`: no room for a result past its first 8 MiB. */
let cramped: ChildServer;
/** The same tables with `limits.spill_budget_mb: 64`: 48 MB for stalled readers, 16 MB kept for paid results. */
let shared: ChildServer;
/** The same tables with `limits.spill_budget_mb: 16`: room for one 20 MB result past its first 8 MiB. */
let tight: ChildServer;

usePaidSandbox((started) => {
  sandbox = started;
});

async function spawn(limits: Record<string, number>): Promise<ChildServer> {
  const tables = [
    ...defaultTables(sandbox.devnet.payTo),
    ...["bulky", "wide_rows"].map((name) => ({ name, description: "large rows", price_tags: [{ type: "fixed", pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, amount: PRICES.flat.config }] })),
    { name: "bulky_free", description: "the same rows, free" },
  ];
  const { configPath } = await sandbox.writeConfig({ tables, server: { metrics: true }, limits: { query_timeout_ms: 30_000, ...limits } });
  return spawnServer(["bun", MAIN, "serve", "--config", configPath, "--bind", "127.0.0.1:0"], / on (http:\/\/\S+)/);
}

beforeAll(async () => {
  const db = new Database(sandbox.databasePath);
  db.run("CREATE TABLE IF NOT EXISTS bulky (id INTEGER PRIMARY KEY, body TEXT)");
  db.run("DELETE FROM bulky");
  db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS}) INSERT INTO bulky SELECT i, printf('%.${TEXT_BYTES}c', 'x') FROM n`);
  db.run("CREATE VIEW IF NOT EXISTS bulky_free AS SELECT id, body FROM bulky");
  db.run("CREATE TABLE IF NOT EXISTS wide_rows (id INTEGER PRIMARY KEY, body TEXT)");
  db.run("DELETE FROM wide_rows");
  db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${WIDE_ROWS}) INSERT INTO wide_rows SELECT i, printf('%.${WIDE_TEXT_BYTES}c', 'y') FROM n`);
  db.close();
  server = await spawn({});
  impatient = await spawn({ send_timeout_ms: 1_000 });
  cramped = await spawn({ spill_budget_mb: 1 });
  shared = await spawn({ spill_budget_mb: 64 });
  tight = await spawn({ spill_budget_mb: 16 });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await impatient?.stop();
  await cramped?.stop();
  await shared?.stop();
  await tight?.stop();
}, 30_000);

const spillBytes = (url: string) => metricValue(url, "arrow402_spill_bytes");

/** A signed payment for `url`'s current offer, as the PAYMENT-SIGNATURE header. */
async function paymentFor(url: string): Promise<string> {
  const payer = await newPayer(sandbox.devnet, 1_000_000n);
  return encodePayment(await payer.sign(await paymentRequired(url)));
}

/** Polls `read` every 100 ms until `done`, at most 20 s; the last value it returned. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let poll = 0; poll < 200 && !done(value); poll++) {
    await Bun.sleep(100);
    value = await read();
  }
  return value;
}

test("a large paid result waits for its buyer in a spill file, not in memory, and arrives whole", async () => {
  const url = queryUrl(server.url, SQL);
  const header = await paymentFor(url);
  const spilledBefore = await metricValue(server.url, "arrow402_spilled_bytes_total");
  const buyer = stalledGet(url, { "PAYMENT-SIGNATURE": header, "Accept-Encoding": "identity" });
  // Settled, then sent until the socket's buffers are full: the rest waits on disk.
  const waiting = await until(() => spillBytes(server.url), (bytes) => bytes > RESULT_BYTES / 2);
  expect(waiting).toBeGreaterThan(RESULT_BYTES / 2);

  const raw = await buyer.resume();
  expect(raw.subarray(0, raw.indexOf("\r\n\r\n")).toString()).toMatch(/payment-response:/i);
  const table = tableFromIPC(dechunk(raw));
  expect(table.numRows).toBe(ROWS);
  expect(Number(table.get(0)!.id)).toBe(1);
  expect(Number(table.get(ROWS - 1)!.id)).toBe(ROWS);
  expect(String(table.get(ROWS - 1)!.body)).toBe("x".repeat(TEXT_BYTES));
  expect(await until(() => spillBytes(server.url), (bytes) => bytes === 0)).toBe(0);
  // Everything past the first 8 MiB went through the file.
  expect(await metricValue(server.url, "arrow402_spilled_bytes_total")).toBeGreaterThanOrEqual(spilledBefore + RESULT_BYTES - 8 * 1024 * 1024);
}, 60_000);

test("a buyer who never reads a held result is cut at the send timeout, and its spill file is freed", async () => {
  const url = queryUrl(impatient.url, SQL);
  const buyer = stalledGet(url, { "PAYMENT-SIGNATURE": await paymentFor(url), "Accept-Encoding": "identity" });
  expect(await until(() => spillBytes(impatient.url), (bytes) => bytes > RESULT_BYTES / 2)).toBeGreaterThan(RESULT_BYTES / 2);
  // Nothing read for 1 s: cut, however long the buyer then waits.
  expect(await until(() => spillBytes(impatient.url), (bytes) => bytes === 0)).toBe(0);
  const raw = await buyer.resume();
  expect(raw.byteLength).toBeLessThan(RESULT_BYTES);
}, 60_000);

test("a held result whose settlement is refused is freed, and the buyer gets the 402 without data", async () => {
  const url = queryUrl(server.url, SQL);
  const header = await paymentFor(url);
  sandbox.proxy.setBehaviour({ settle: { kind: "reply", status: 200, body: { success: false, errorReason: "invalid_exact_evm_insufficient_balance", transaction: "", network: `eip155:${sandbox.devnet.chainId}` } } });
  try {
    const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(response.status).toBe(402);
    expect((await response.json()).error).toContain("invalid_exact_evm_insufficient_balance");
  } finally {
    sandbox.proxy.setBehaviour({});
  }
  expect(await spillBytes(server.url)).toBe(0);
}, 60_000);

test("a settlement slower than send_timeout_ms does not cut the answer: the send timeout starts when the answer does", async () => {
  const url = queryUrl(impatient.url, SQL);
  const header = await paymentFor(url);
  sandbox.proxy.setBehaviour({ settle: { kind: "hang", ms: 1_500 } });
  try {
    const raw = await stalledGet(url, { "PAYMENT-SIGNATURE": header, "Accept-Encoding": "identity" }).resume();
    expect(tableFromIPC(dechunk(raw)).numRows).toBe(ROWS);
  } finally {
    sandbox.proxy.setBehaviour({});
  }
}, 60_000);

test("a read started while /verify runs is stopped and freed when /verify then refuses the payment", async () => {
  // LIMIT 1000 and no WHERE: provably small in rows, so it is read while the facilitator verifies.
  const url = queryUrl(server.url, `SELECT id, body FROM wide_rows LIMIT ${WIDE_ROWS}`);
  const header = await paymentFor(url);
  sandbox.proxy.setBehaviour({ verify: { kind: "reject", invalidReason: "insufficient_funds" } });
  try {
    const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(response.status).toBe(402);
  } finally {
    sandbox.proxy.setBehaviour({});
  }
  // Unstopped, the read ends ~0.3 s later with 12 MB in its spill file, held until the 60 s send
  // timeout; stopped, nothing is left once it has had time to end.
  await Bun.sleep(2_000);
  expect(await spillBytes(server.url)).toBe(0);
}, 60_000);

test("a paid result the spill budget has no room for is refused before settlement: 503, nothing charged, nothing held", async () => {
  const url = queryUrl(cramped.url, SQL);
  const header = await paymentFor(url);
  const settles = sandbox.proxy.counts.settle;
  const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("30");
  expect(response.headers.get("content-type")).toContain("text/plain");
  expect(response.headers.get("payment-response")).toBeNull();
  expect(await response.text()).toContain("nothing was charged");
  expect(sandbox.proxy.counts.settle).toBe(settles);
  expect(await spillBytes(cramped.url)).toBe(0);
  // A result that fits its first 8 MiB is still sold.
  const small = queryUrl(cramped.url, `${FROM} LIMIT 1000`);
  const paid = await fetch(small, { headers: { "PAYMENT-SIGNATURE": await paymentFor(small), "Accept-Encoding": "identity" } });
  expect(paid.status).toBe(200);
  expect(tableFromIPC(new Uint8Array(await paid.arrayBuffer())).numRows).toBe(1_000);
}, 60_000);

test("readers who stop reading free exports cannot take the room a paid result needs while it settles", async () => {
  // 80 MB of free rows to a client that reads nothing: its file stops at 48 MB (the rest waits in its worker).
  const staller = stalledGet(queryUrl(shared.url, "SELECT id, body FROM bulky_free"), { "Accept-Encoding": "identity" });
  const stalled = await until(() => spillBytes(shared.url), (bytes) => bytes > 40_000_000);
  expect(stalled).toBeGreaterThan(40_000_000);
  await Bun.sleep(500);
  expect(await spillBytes(shared.url)).toBeLessThanOrEqual(48 * 1024 * 1024);
  // 20 MB bought: its 12 MB past the first 8 MiB wait in the room kept for paid results.
  const url = queryUrl(shared.url, `${FROM} LIMIT 5000`);
  const paid = await fetch(url, { headers: { "PAYMENT-SIGNATURE": await paymentFor(url), "Accept-Encoding": "identity" } });
  expect(paid.status).toBe(200);
  expect(tableFromIPC(new Uint8Array(await paid.arrayBuffer())).numRows).toBe(5_000);
  const free = tableFromIPC(dechunk(await staller.resume()));
  expect(free.numRows).toBe(ROWS);
}, 60_000);

test("a settled payment presented again when its result finds no room: 503 naming the settlement, then served without a new charge", async () => {
  const url = queryUrl(tight.url, `${FROM} LIMIT 5000`);
  const header = await paymentFor(url);
  const headers = { "PAYMENT-SIGNATURE": header, "Accept-Encoding": "identity" };
  const first = await fetch(url, { headers });
  expect(first.status).toBe(200);
  await first.arrayBuffer();
  const settles = sandbox.proxy.counts.settle;
  // A stalled free export takes over 6 MB of the 16 MiB: the 12 MB the result needs are not there.
  const staller = stalledGet(queryUrl(tight.url, "SELECT id, body FROM bulky_free"), { "Accept-Encoding": "identity" });
  expect(await until(() => spillBytes(tight.url), (bytes) => bytes > 6_000_000)).toBeGreaterThan(6_000_000);
  const again = await fetch(url, { headers });
  expect(again.status).toBe(503);
  expect(again.headers.get("retry-after")).toBe("30");
  const text = await again.text();
  expect(text).toContain("Your payment was settled (transaction 0x");
  expect(text).not.toContain("nothing was charged");
  expect(tableFromIPC(dechunk(await staller.resume())).numRows).toBe(ROWS);
  const served = await fetch(url, { headers });
  expect(served.status).toBe(200);
  expect(tableFromIPC(new Uint8Array(await served.arrayBuffer())).numRows).toBe(5_000);
  expect(sandbox.proxy.counts.settle).toBe(settles);
}, 60_000);
