/**
 * A replay is the same answer, not a new query (DESIGN.md §17), through the real listening server,
 * the devnet's facilitator and x402's own client: a settled payment presented again is served the
 * very bytes it bought, at most `limits.max_replays` times; after inserts it is a 402 with the
 * current offers, never the new rows. And 250 replays of one payment left unread cost the server
 * a bounded amount of memory and spill (a real `arrow402 serve` process, measured from /proc).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { PRICES, SANDBOX_START_TIMEOUT_MS, TOKEN_KEY, defaultTables, startPaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { newPayer, queryUrl } from "../support/paying.ts";
import { spawnServe, stopAllServers, writeServeConfig } from "../support/serve-process.ts";
import { stalledGet } from "../support/stalled-get.ts";

const FUNDS = 10_000_000n;
const MAX_REPLAYS = 3;

let sandbox: PaidSandbox;
let server: PaidServer;

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  const db = new Database(sandbox.databasePath, { readwrite: true });
  db.run("CREATE TABLE ticks (id INTEGER PRIMARY KEY, note TEXT)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) INSERT INTO ticks SELECT x, 'tick ' || x FROM c");
  // About 4 MB of Arrow: a paid answer that is not small.
  db.run("CREATE TABLE wide (id INTEGER PRIMARY KEY, blob_text TEXT)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) INSERT INTO wide SELECT x, hex(randomblob(2000)) FROM c");
  db.close();
  server = await sandbox.serve({ tables: [...defaultTables(sandbox.devnet.payTo), ...soldTables()] });
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  await stopAllServers();
  await sandbox?.stop();
});

function soldTables() {
  const tag = (fields: Record<string, unknown>) => ({ pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, ...fields });
  return [
    { name: "ticks", price_tags: [tag({ type: "fixed", amount: PRICES.flat.config })] },
    { name: "wide", price_tags: [tag({ type: "fixed", amount: PRICES.flat.config })] },
  ];
}

/**
 * Writes to the data file. The server runs in this process, so a write waits here, off the thread,
 * and tries again while the file is locked.
 */
async function write(sql: string): Promise<void> {
  const db = new Database(sandbox.databasePath, { readwrite: true });
  try {
    for (let tries = 0; ; tries++) {
      await Bun.sleep(10);
      try {
        db.run(sql);
        return;
      } catch (error) {
        if (tries > 200 || (error as { code?: string }).code !== "SQLITE_BUSY") throw error;
      }
    }
  } finally {
    db.close();
  }
}
const present = (url: string, signature: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), "PAYMENT-SIGNATURE": signature } });

/** Pays for `sql` once; the body and the PAYMENT-SIGNATURE that paid it. */
async function paid(sql: string, target = server.url) {
  const payer = await newPayer(sandbox.devnet, FUNDS);
  const response = await payer.fetch(queryUrl(target, sql));
  if (response.status !== 200) throw new Error(`paying for ${sql}: ${response.status} ${await response.text()}`);
  return { payer, body: new Uint8Array(await response.arrayBuffer()), signature: payer.signatures.at(-1)! };
}

describe("the same answer, or nothing", () => {
  test("after inserts: 402 with the current offers, never the new rows; once the data is back, the same bytes again", async () => {
    const sql = "SELECT id, note FROM ticks WHERE id > 30 LIMIT 50";
    const { payer, body, signature } = await paid(sql);
    const balance = await sandbox.devnet.balanceOf(payer.address);
    await write("INSERT INTO ticks VALUES (41, 'inserted after the payment')");
    try {
      for (let i = 0; i < 2; i++) {
        const again = await present(queryUrl(server.url, sql), signature);
        expect(again.status).toBe(402);
        const text = await again.text();
        expect(JSON.parse(text).error).toBe(PAYMENT_MESSAGES.replayChanged);
        expect(text).not.toContain("inserted after the payment");
      }
    } finally {
      await write("DELETE FROM ticks WHERE id = 41");
    }
    const recovered = await present(queryUrl(server.url, sql), signature);
    expect(recovered.status).toBe(200);
    expect(new Uint8Array(await recovered.arrayBuffer())).toEqual(body);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(balance);
  });

  test(`served again at most ${MAX_REPLAYS} times (limits.max_replays, default), then 402`, async () => {
    const sql = "SELECT id FROM ticks WHERE id <= 5 LIMIT 5";
    const { body, signature } = await paid(sql);
    for (let i = 0; i < MAX_REPLAYS; i++) {
      const again = await present(queryUrl(server.url, sql), signature);
      expect(again.status).toBe(200);
      expect(new Uint8Array(await again.arrayBuffer())).toEqual(body);
    }
    const refused = await present(queryUrl(server.url, sql), signature);
    expect(refused.status).toBe(402);
    expect((await refused.json()).error).toBe(PAYMENT_MESSAGES.replaysExhausted(MAX_REPLAYS));
  });

  test("only in the format it was delivered in", async () => {
    const sql = "SELECT id FROM ticks WHERE id <= 3 LIMIT 3";
    const { signature } = await paid(sql);
    const csv = await present(queryUrl(server.url, sql), signature, { headers: { accept: "text/csv" } });
    expect(csv.status).toBe(402);
    expect((await csv.json()).error).toBe(PAYMENT_MESSAGES.replayFormat("arrow"));
    expect((await present(queryUrl(server.url, sql), signature)).status).toBe(200);
  });
});

describe("250 replays of one payment left unread", () => {
  test("a bounded server: at most max_replays are read again, the rest are refused at once; memory and spill stay small", async () => {
    const config = await writeServeConfig({
      dir: join(sandbox.dir, "replays-serve"),
      devnet: sandbox.devnet,
      databasePath: sandbox.databasePath,
      facilitatorUrl: sandbox.devnet.facilitatorUrl,
      ledger: { path: "./ledger.sqlite" },
      tables: [...defaultTables(sandbox.devnet.payTo), ...soldTables()],
      queryTimeoutMs: 10_000,
    });
    const serve = await spawnServe(config);
    const sql = "SELECT id, blob_text FROM wide LIMIT 1000";
    const { body, signature } = await paid(sql, config.url);
    expect(body.byteLength).toBeGreaterThan(3_000_000);
    const rssBefore = residentBytes(serve.pid);
    const stalled = [];
    for (let i = 0; i < 250; i++) {
      stalled.push(stalledGet(queryUrl(config.url, sql), { "PAYMENT-SIGNATURE": signature }));
      // One at a time, as a client replaying in a loop: each finds the payment free to claim.
      if (i % 10 === 9) await Bun.sleep(20);
    }
    await Bun.sleep(1_500);
    const grown = residentBytes(serve.pid) - rssBefore;
    const answers = await Promise.all(stalled.map((get) => get.resume()));
    const statuses = answers.map((raw) => Number(raw.subarray(9, 12).toString()));
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(MAX_REPLAYS);
    expect(statuses.every((status) => status === 200 || status === 402)).toBe(true);
    // Four answers of ~4 MB at most are held for their readers; 250 were 1 GB before replays were counted.
    expect(grown).toBeLessThan(96 * 1024 * 1024);
  }, 120_000);
});

/** VmRSS of a process, in bytes (Linux). */
function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}
