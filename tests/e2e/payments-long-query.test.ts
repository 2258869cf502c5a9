/**
 * Long paid queries: a paid retry carries the URL twice (request line and, base64-encoded, the
 * PAYMENT-SIGNATURE payload's `resource.url`), and the server refuses request heads over its
 * header limit with 431. A query is quoted only if @x402/fetch's paid retry of it can get through;
 * a longer one is a 400 saying what to shorten, before anything is signed.
 */
import { expect, test } from "bun:test";
import { type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, newPayer, queryUrl } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

/** A per_row query over all 200 items whose URL grows by one byte per unit of `padding`. */
const paddedSql = (padding: number) => `SELECT id FROM items WHERE name <> '${"x".repeat(padding)}'`;

/**
 * The longest query the server quotes under `urlOf`: a black-box search (bounded: 14 halvings);
 * 12 000 bytes still reach the server unpaid, so its refusal is our 400, not the 431 of an
 * oversized head.
 */
async function longestQuoted(urlOf: (padding: number) => string): Promise<number> {
  const statusOf = async (padding: number) => (await fetch(urlOf(padding))).status;
  let quoted = 0;
  let refused = 12_000;
  expect(await statusOf(quoted)).toBe(402);
  expect(await statusOf(refused)).toBe(400);
  while (refused - quoted > 1) {
    const middle = (quoted + refused) >> 1;
    if ((await statusOf(middle)) === 402) quoted = middle;
    else refused = middle;
  }
  return quoted;
}

test("spaces sent as '+': the paid retry carries the canonical resource (each space %20), and the longest query quoted still fits", async () => {
  // One byte per space in the request line, three in the resource.url the payload repeats.
  const spaced = (padding: number) => `SELECT id FROM items WHERE name <> 'x${" ".repeat(padding)}'`;
  const urlOf = (padding: number) => `${server.url}/api/query?query=${encodeURIComponent(spaced(padding)).replaceAll("%20", "+")}`;
  const quoted = await longestQuoted(urlOf);
  const payer = await newPayer(sandbox.devnet, 1_000_000n);
  const paid = await payer.fetch(urlOf(quoted));
  expect((await arrowResult(paid)).rows).toHaveLength(200);
});

test("the longest query the server quotes is paid through @x402/fetch; one byte more is a 400 saying what to shorten", async () => {
  const quoted = await longestQuoted((padding) => queryUrl(server.url, paddedSql(padding)));

  const tooLong = await fetch(queryUrl(server.url, paddedSql(quoted + 1)));
  expect(tooLong.status).toBe(400);
  expect(tooLong.headers.get("content-type")).toStartWith("text/plain");
  expect(await tooLong.text()).toMatch(/too long to be paid for.*shorten the URL-encoded query by at least \d+ bytes/);

  const settled = server.ledgerRows().length;
  const payer = await newPayer(sandbox.devnet, 1_000_000n);
  const paid = await payer.fetch(queryUrl(server.url, paddedSql(quoted)));
  const { rows } = await arrowResult(paid);
  expect(rows).toHaveLength(200);
  expect(server.ledgerRows()).toHaveLength(settled + 1);
});
