/**
 * Replays and races through the real listening server (ARCHITECTURE.md §6 "Replay and races"): a settled
 * payment presented again for the same resource is served again without a new charge; for another
 * resource it is 402; concurrent copies of one payment settle exactly once.
 */
import { describe, expect, test } from "bun:test";
import { type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl, type Payer } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
/** How long the held settlement waits for the duplicates' answers before giving up (bounds a broken lock). */
const HOLD_LIMIT_MS = 10_000;

const send = (url: string, paymentSignature: string) => fetch(url, { headers: { "PAYMENT-SIGNATURE": paymentSignature } });

/** Payer, pay_to and ledger now; compare later to prove that nothing more was charged. */
async function snapshot(payer: Payer) {
  const { devnet } = sandbox;
  return {
    payer: await devnet.balanceOf(payer.address),
    payTo: await devnet.balanceOf(devnet.payTo),
    ledger: server.ledgerRows().length,
  };
}

/** Pays for `sql` once with @x402/fetch; returns the signature that was sent and the receipt. */
async function payOnce(sql: string) {
  const payer = await newPayer(sandbox.devnet, FUNDS);
  const url = queryUrl(server.url, sql);
  const response = await payer.fetch(url);
  const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
  const { rows } = await arrowResult(response);
  expect(rows).toEqual(sandbox.sqliteRows(sql));
  expect(payer.signatures).toHaveLength(1);
  return { payer, url, receipt, rows, signature: payer.signatures[0]! };
}

describe("a settled payment presented again", () => {
  test("for the same resource URL: 200 with the same data and receipt, no new charge, no facilitator call", async () => {
    const { payer, url, receipt, rows, signature } = await payOnce("SELECT id, name, price FROM items WHERE id BETWEEN 60 AND 75");
    const before = await snapshot(payer);
    sandbox.resetProxy();

    const again = await send(url, signature);
    expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toEqual(receipt);
    expect((await arrowResult(again)).rows).toEqual(rows);
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await snapshot(payer)).toEqual(before);
  });

  test("for another query or another resource: 402 without data, no charge", async () => {
    const { payer, signature } = await payOnce("SELECT id, name FROM items WHERE id BETWEEN 80 AND 84");
    const before = await snapshot(payer);
    sandbox.resetProxy();

    const otherSql = "SELECT id, name FROM items WHERE id BETWEEN 85 AND 89";
    for (const url of [queryUrl(server.url, otherSql), `${server.url}/api/table/items`]) {
      const response = await send(url, signature);
      expect(response.status).toBe(402);
      expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
      const body = await response.json();
      expect(body.error).toContain("another resource");
      expect(body.resource.url).toBe(url);
      for (const row of sandbox.sqliteRows(otherSql)) expect(JSON.stringify(body)).not.toContain(String(row.name));
    }
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    expect(await snapshot(payer)).toEqual(before);
  });
});

test("five concurrent requests with one signature: exactly one settlement and one 200 with data; the others 402", async () => {
  const { devnet } = sandbox;
  const sql = "SELECT id, name, category FROM items WHERE id BETWEEN 100 AND 119";
  const url = queryUrl(server.url, sql);
  const payer = await newPayer(devnet, FUNDS);
  const quoted = await paymentRequired(url);
  const price = BigInt(quoted.accepts[0]!.amount);
  const header = encodePayment(await payer.sign(quoted));
  const before = await snapshot(payer);

  // Hold the settlement until the four duplicates have been answered, so that they certainly
  // arrive while the first request is being processed (the race this test is about).
  let refused = 0;
  let releaseSettlement!: () => void;
  const duplicatesAnswered = new Promise<void>((resolve) => (releaseSettlement = resolve));
  sandbox.proxy.setBehaviour({ settle: { kind: "hook", before: () => Promise.race([duplicatesAnswered, Bun.sleep(HOLD_LIMIT_MS)]) } });

  const results = await Promise.all(
    Array.from({ length: 5 }, async () => {
      const response = await send(url, header);
      if (response.status === 402) {
        refused += 1;
        if (refused === 4) releaseSettlement();
      }
      return response;
    }),
  );

  const served = results.filter((response) => response.status === 200);
  const refusals = results.filter((response) => response.status === 402);
  expect({ served: served.length, refused: refusals.length }).toEqual({ served: 1, refused: 4 });
  expect((await arrowResult(served[0]!)).rows).toEqual(sandbox.sqliteRows(sql));
  for (const refusal of refusals) {
    const body = await refusal.json();
    expect(body.error).toContain("being processed by another request");
    for (const row of sandbox.sqliteRows(sql)) expect(JSON.stringify(body)).not.toContain(String(row.name));
  }
  expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
  expect(await snapshot(payer)).toEqual({ payer: before.payer - price, payTo: before.payTo + price, ledger: before.ledger + 1 });
});
