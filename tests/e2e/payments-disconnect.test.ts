/**
 * A paying client that goes away before its response is ready is not charged (ARCHITECTURE.md §6
 * step 7: a failure before settlement is never charged): the server leaves the payment unsettled,
 * and the same payment sent again is then processed and settled exactly once. The paid result,
 * held until settlement, stops being read as soon as its buyer has gone.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import type { OpsEvent } from "../../src/ops/events.ts";
import { PRICES, TOKEN_KEY, defaultTables, type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 20 AND 29 LIMIT 100";
/** Bounds the wait for the first request to finish on the server (it holds the payment until then). */
const MAX_POLLS = 100;

test("a client that disconnects while its paid query is being processed is not charged", async () => {
  const { devnet, proxy } = sandbox;
  const url = queryUrl(server.url, FIXED_SQL);
  const payer = await newPayer(devnet, 1_000_000n);
  const header = encodePayment(await payer.sign(await paymentRequired(url)));
  const payToBefore = await devnet.balanceOf(devnet.payTo);

  // The client gives up while the facilitator is verifying; the server carries on afterwards.
  const client = new AbortController();
  let aborted = false;
  proxy.setBehaviour({
    verify: {
      kind: "hook",
      before: async () => {
        if (aborted) return;
        aborted = true;
        client.abort();
        await Bun.sleep(300); // lets the server notice the closed connection
      },
    },
  });
  proxy.resetCounts();
  const first = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header }, signal: client.signal }).catch((error: Error) => error.name);
  expect(first).toBe("AbortError");

  // The same payment again: refused as "in use" until the first request has finished.
  let again: Response | null = null;
  for (let poll = 0; poll < MAX_POLLS; poll++) {
    const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    if (response.status === 402 && (await response.clone().json()).error === PAYMENT_MESSAGES.inUse) {
      await Bun.sleep(50);
      continue;
    }
    again = response;
    break;
  }
  expect(again).not.toBeNull();
  const { rows } = await arrowResult(again!);
  expect(rows.map((row) => Number(row.id))).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  // The abandoned request was verified but never settled; the second one was verified and settled.
  expect(proxy.counts).toMatchObject({ verify: 2, settle: 1 });
  expect(server.ledgerRows()).toHaveLength(1);
  expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + 50_000n);
});

/** Bytes this process has read through read()/pread() (the server runs in it). */
const bytesRead = () => Number(/^rchar:\s+(\d+)/m.exec(readFileSync("/proc/self/io", "utf8"))![1]);

test("a buyer who leaves while a large paid result is read stops the read: it is not held for nobody, nor charged", async () => {
  const { devnet, proxy } = sandbox;
  const db = new Database(sandbox.databasePath);
  db.run("CREATE TABLE IF NOT EXISTS bulky (id INTEGER PRIMARY KEY, body TEXT)");
  db.run("DELETE FROM bulky");
  db.run("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO bulky SELECT i, printf('%.4000c', 'x') FROM n");
  const tableBytes = (db.query("SELECT sum(pgsize) AS bytes FROM dbstat WHERE name = 'bulky'").get() as { bytes: number }).bytes;
  db.close();
  const tables = [
    ...defaultTables(devnet.payTo),
    { name: "bulky", description: "large rows", price_tags: [{ type: "fixed", pay_to: devnet.payTo, token: TOKEN_KEY, amount: PRICES.flat.config }] },
  ];
  const bulky = await sandbox.serve({ tables, limits: { query_timeout_ms: 30_000 } });
  try {
    const url = queryUrl(bulky.url, "SELECT id, body FROM bulky LIMIT 20000");
    const payer = await newPayer(devnet, 1_000_000n);
    const header = encodePayment(await payer.sign(await paymentRequired(url)));
    const finished = new Promise<void>((resolve) =>
      bulky.events.subscribe((event: OpsEvent) => event.type === "request.finished" && event.route === "/api/query" && event.status !== 402 && resolve()),
    );
    // The buyer leaves while the facilitator verifies; the (large) query runs once it has.
    const client = new AbortController();
    proxy.setBehaviour({
      verify: {
        kind: "hook",
        before: async () => {
          client.abort();
          await Bun.sleep(300); // lets the server notice the closed connection
        },
      },
    });
    proxy.resetCounts();
    const before = bytesRead();
    expect(await fetch(url, { headers: { "PAYMENT-SIGNATURE": header }, signal: client.signal }).catch((error: Error) => error.name)).toBe("AbortError");
    await finished;
    // Read whole, it would be more than the table (80 MB); the buyer is gone before it starts.
    expect(bytesRead() - before).toBeLessThan(tableBytes / 8);
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(bulky.ledgerRows()).toHaveLength(0);
  } finally {
    proxy.setBehaviour({});
    await bulky.stop();
  }
}, 60_000);
