/**
 * One SQL is one resource (DESIGN.md §17, ARCHITECTURE.md §6): `resource.url` is the canonical URL
 * of the request's SQL, whatever correct encoding the client used (`%20` or `+`, `%2A` or `*`,
 * Python's `quote`, `requests`' form encoding, lower-case escapes) and whatever `format` it asked
 * for. So the same SQL is quoted, paid and served again as the same resource under any of them,
 * and a payment made over MCP is served again over HTTP. Through the real listening server, the
 * devnet chain and the real x402 facilitator; balances read on chain.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { PRICES, type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl, type Payer } from "../support/paying.ts";
import { callPaying, connectMcp, receiptOf } from "../mcp/support.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started) => {
  sandbox = started;
});
// One payment is presented again under every encoding: more times than the default max_replays.
beforeAll(async () => {
  server = await sandbox.serve({ limits: { max_replays: 20 } });
});

const FUNDS = 1_000_000n;

/** `%XX` of one character's UTF-8 bytes. */
const escape = (c: string, hex: (s: string) => string = (s) => s.toUpperCase()) =>
  [...new TextEncoder().encode(c)].map((b) => `%${hex(b.toString(16).padStart(2, "0"))}`).join("");

/** The encodings of a query string value that HTTP clients send for the same SQL. */
const ENCODINGS: [string, (sql: string) => string][] = [
  ["encodeURIComponent (%20, * as is)", (sql) => encodeURIComponent(sql)],
  ["an HTML form (+ for spaces)", (sql) => encodeURIComponent(sql).replaceAll("%20", "+")],
  ["%2A for *", (sql) => encodeURIComponent(sql).replaceAll("*", "%2A")],
  ["Python's urllib.parse.quote(sql, safe='')", (sql) => encodeURIComponent(sql).replace(/[!'()*]/g, (c) => escape(c))],
  ["requests' params= (quote_plus)", (sql) => encodeURIComponent(sql).replace(/[!'()*]/g, (c) => escape(c)).replaceAll("%20", "+")],
  ["every byte escaped, lower-case hex", (sql) => [...sql].map((c) => escape(c, (s) => s)).join("")],
];

/** The same SQL under each encoding, with `format=arrow` once (not part of the resource either). */
const urlsOf = (base: string, sql: string) => [
  ...ENCODINGS.map(([name, encode]) => [name, `${base}/api/query?query=${encode(sql)}`] as const),
  ["with &format=arrow", `${base}/api/query?query=${encodeURIComponent(sql).replaceAll("%20", "+")}&format=arrow`] as const,
];

async function snapshot(payer: Payer) {
  return { payer: await sandbox.devnet.balanceOf(payer.address), payTo: await sandbox.devnet.balanceOf(sandbox.devnet.payTo), ledger: server.ledgerRows().length };
}

describe("one SQL, any encoding", () => {
  const SQL = "SELECT * FROM items WHERE id BETWEEN 60 AND 64 AND name <> 'it''s (x)'";

  test("every 402 names the same resource.url: the canonical URL of the SQL", async () => {
    const canonical = queryUrl(server.url, SQL);
    const urls = urlsOf(server.url, SQL);
    // The encodings differ on the wire.
    expect(new Set(urls.map(([, url]) => new URL(url).search)).size).toBe(urls.length);
    for (const [name, url] of urls) {
      const quoted = await paymentRequired(url);
      expect({ name, url: quoted.resource.url }).toEqual({ name, url: canonical });
      expect(quoted.accepts[0]!.amount).toBe(String(5n * PRICES.perItem.units));
    }
  });

  test("paid under one encoding, served again under every other: 200, the same receipt, no second charge", async () => {
    const urls = urlsOf(server.url, SQL);
    const [, first] = urls[1]!; // the form encoding
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const header = encodePayment(await payer.sign(await paymentRequired(first)));
    const paid = await fetch(first, { headers: { "PAYMENT-SIGNATURE": header } });
    const receipt = decodeHeader(paid.headers.get("PAYMENT-RESPONSE"));
    expect(receipt).toMatchObject({ success: true });
    const expected = sandbox.sqliteRows(SQL);
    expect((await arrowResult(paid)).rows).toEqual(expected);
    const before = await snapshot(payer);
    sandbox.resetProxy();

    for (const [name, url] of urls) {
      const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
      expect({ name, status: again.status }).toEqual({ name, status: 200 });
      expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toEqual(receipt);
      expect((await arrowResult(again)).rows).toEqual(expected);
    }
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await snapshot(payer)).toEqual(before);
    expect(before.payer).toBe(FUNDS - 5n * PRICES.perItem.units);
  });

  test("paid over MCP, served again over HTTP under another encoding: no second charge", async () => {
    const sql = "SELECT id, name FROM items WHERE id BETWEEN 70 AND 72 AND name <> '*'";
    const mcp = await connectMcp(server.url);
    try {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const { payload, paid } = await callPaying(mcp, payer.sign, "query", { sql });
      const receipt = receiptOf(paid)!;
      expect(receipt.success).toBe(true);
      const before = await snapshot(payer);
      sandbox.resetProxy();
      for (const [name, url] of urlsOf(server.url, sql)) {
        const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": encodePayment(payload) } });
        expect({ name, status: again.status }).toEqual({ name, status: 200 });
        expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toEqual(receipt);
        expect((await arrowResult(again)).rows).toEqual(sandbox.sqliteRows(sql));
      }
      expect(sandbox.proxy.requests).toEqual([]);
      expect(await snapshot(payer)).toEqual(before);
    } finally {
      await mcp.close();
    }
  });
});
