/**
 * What overlaps the facilitator's /verify (ARCHITECTURE.md §6), through the real listening server: the
 * settlement attempt is committed to the ledger (and a provably cheap fixed-price query runs) while
 * /verify is in flight. Whatever /verify answers, the ledger ends up exact — a refused payment
 * leaves no attempt behind, a settled one is recorded with the rows delivered — no data leaves
 * unpaid, and a query that fails is never charged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { PaidQueryFailedError } from "../../src/errors.ts";
import { PRICES, TOKEN_KEY, defaultTables, type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl, type Payer } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 40 AND 46 LIMIT 100";
/** Fails while running, after validation: its one row holds a DATE that is not a date (flat_dates, below). */
const FAILING_SQL = "SELECT id, d FROM flat_dates WHERE id = 1 LIMIT 1";
const TIME_LIMIT_MS = 1_000;

/**
 * Holds /verify until the server's attempt row is on disk (bounded wait), counts the unconfirmed
 * rows seen then, runs `then` (e.g. drains the payer, so that the facilitator refuses the payment),
 * and forwards the request to the real facilitator.
 */
function watchAttemptsDuringVerify(then?: () => Promise<unknown>): { seen: () => number | null } {
  let seen: number | null = null;
  const before = server.unconfirmedRows().length;
  sandbox.proxy.setBehaviour({
    verify: {
      kind: "hook",
      before: async () => {
        for (let i = 0; i < 100 && server.unconfirmedRows().length === before; i++) await Bun.sleep(20);
        seen = server.unconfirmedRows().length - before;
        await then?.();
      },
    },
  });
  return { seen: () => seen };
}

async function balances(payer: Payer) {
  return { payer: await sandbox.devnet.balanceOf(payer.address), payTo: await sandbox.devnet.balanceOf(sandbox.devnet.payTo) };
}

describe("while /verify is in flight", () => {
  test("the attempt is already in the ledger; once settled it is one settled row with the rows delivered", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const watch = watchAttemptsDuringVerify();
    const settledBefore = server.ledgerRows().length;
    const unconfirmedBefore = server.unconfirmedRows().length;

    const response = await payer.fetch(queryUrl(server.url, FIXED_SQL));
    const { rows } = await arrowResult(response);
    expect(rows.map((row) => row.id)).toEqual(sandbox.sqliteRows(FIXED_SQL).map((row) => row.id));
    expect(decodeHeader(response.headers.get("PAYMENT-RESPONSE"))).toMatchObject({ success: true });
    expect(watch.seen()).toBe(1);
    expect(server.unconfirmedRows()).toHaveLength(unconfirmedBefore);
    expect(server.ledgerRows()).toHaveLength(settledBefore + 1);
    expect(server.ledgerRows().at(-1)).toMatchObject({ table_name: "flat_items", query: FIXED_SQL, rows: rows.length, payer: payer.address });
  });

  test("refused by /verify (the payer emptied its wallet meanwhile): 402 without data, nothing charged, and the attempt is removed", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const watch = watchAttemptsDuringVerify(() => sandbox.devnet.drain(payer.privateKey));
    const before = { settled: server.ledgerRows().length, unconfirmed: server.unconfirmedRows().length, ...(await balances(payer)) };

    const response = await payer.fetch(queryUrl(server.url, FIXED_SQL));
    expect(response.status).toBe(402);
    const text = await response.text();
    expect(JSON.parse(text).error).toContain("not verified");
    for (const row of sandbox.sqliteRows(FIXED_SQL)) expect(text).not.toContain(String(row.name));
    expect(watch.seen()).toBe(1);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    // The payer's funds went where it sent them, not to payTo.
    expect({ settled: server.ledgerRows().length, unconfirmed: server.unconfirmedRows().length, ...(await balances(payer)) }).toEqual({ ...before, payer: 0n });
  });
});

describe("a fixed-price query that fails while running", () => {
  let failing: PaidServer;
  beforeAll(async () => {
    const db = new Database(sandbox.databasePath, { readwrite: true });
    db.run("CREATE TABLE flat_dates (id INTEGER PRIMARY KEY, d DATE)");
    db.run("INSERT INTO flat_dates VALUES (1, 'not a date')");
    db.close();
    const tag = { type: "fixed", pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, amount: PRICES.flat.config };
    failing = await sandbox.serve({ limits: { query_timeout_ms: TIME_LIMIT_MS }, tables: [...defaultTables(sandbox.devnet.payTo), { name: "flat_dates", price_tags: [tag] }] });
  });
  afterAll(() => failing?.stop());

  test("fails, and /verify refuses the payment: the refusal is the answer (402), the query's failure is discarded", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    // Emptied once it was read funded: the facilitator refuses it.
    sandbox.proxy.setBehaviour({ verify: { kind: "hook", before: () => sandbox.devnet.drain(payer.privateKey).then(() => {}) } });
    const unconfirmedBefore = failing.unconfirmedRows().length;
    const response = await payer.fetch(queryUrl(failing.url, FAILING_SQL));
    expect(response.status).toBe(402);
    expect((await response.json()).error).toContain("not verified");
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(failing.unconfirmedRows()).toHaveLength(unconfirmedBefore);
  });

  test("fails, and /verify accepts the payment: the one 400 of a failure after payment, never settled, nothing charged, no attempt left", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = { settled: failing.ledgerRows().length, unconfirmed: failing.unconfirmedRows().length, ...(await balances(payer)) };
    const response = await payer.fetch(queryUrl(failing.url, FAILING_SQL));
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(new PaidQueryFailedError(TIME_LIMIT_MS).message);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect({ settled: failing.ledgerRows().length, unconfirmed: failing.unconfirmedRows().length, ...(await balances(payer)) }).toEqual(before);
  });
});
