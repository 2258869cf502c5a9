/**
 * No free oracles (DESIGN.md §17), through the real listening server, the devnet's facilitator and
 * x402's own client. On a table whose quotes tell nothing about the data (a fixed price, or per_row
 * quoted by LIMIT), a buyer learns nothing from a failure that a free query would not tell:
 * - what can fail depending on a value (abs() of -2^63, a LIKE pattern read from the table) is
 *   refused before any payment: no /verify, whatever the row;
 * - a LIMIT within max_rows is required, so `LIMIT … OFFSET k` cannot count the table;
 * - what still fails after /verify (the time limit, a value that does not fit its type) gets one
 *   text, no earlier than the time limit, and nothing is charged.
 * And `quote: limit` prices per_row by the LIMIT, over HTTP and MCP, without reading the data.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { PaidQueryFailedError } from "../../src/errors.ts";
import { PRICES, QUERY_DESCRIPTION, SANDBOX_START_TIMEOUT_MS, TOKEN_KEY, defaultTables, startPaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl, type Payer } from "../support/paying.ts";
import { callPaying, connectMcp, paymentRequiredOf, receiptOf, refusalOf, type McpSession } from "../mcp/support.ts";

const FUNDS = 10_000_000n;
const MAX_ROWS = 50;
const TIME_LIMIT_MS = 1_500;
const SMALLEST_INT64 = -(2n ** 63n);
/** Row 7 holds the values that fail: the smallest int64, a 60,000-byte text, a DATE that is not one. */
const TRAP_ROW = 7;

let sandbox: PaidSandbox;
let server: PaidServer;
let mcp: McpSession;

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  const db = new Database(sandbox.databasePath, { readwrite: true });
  db.run("CREATE TABLE vault (id INTEGER PRIMARY KEY, n INTEGER, s TEXT, d DATE, r REAL)");
  const insert = db.prepare("INSERT INTO vault VALUES (?1, ?2, ?3, ?4, ?5)");
  for (let id = 1; id <= 30; id++) {
    const trap = id === TRAP_ROW;
    insert.run(id, trap ? SMALLEST_INT64 : id * 10, trap ? "x".repeat(60_000) : `v${id}`, trap ? "not a date" : "2024-01-02", id / 2);
  }
  // Enough rows for a WHERE that renders a long strftime() per row to run past the time limit.
  db.run("CREATE TABLE slow_vault (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) INSERT INTO slow_vault SELECT x, 'v' FROM c");
  db.run("CREATE VIEW vault_by_limit AS SELECT * FROM vault");
  db.close();
  const payTo = sandbox.devnet.payTo;
  const tag = (fields: Record<string, unknown>) => ({ pay_to: payTo, token: TOKEN_KEY, ...fields });
  server = await sandbox.serve({
    limits: { max_rows: MAX_ROWS, query_timeout_ms: TIME_LIMIT_MS, mcp_max_rows: MAX_ROWS },
    tables: [
      ...defaultTables(payTo),
      { name: "vault", description: "Sold per query", price_tags: [tag({ type: "fixed", amount: PRICES.flat.config })] },
      { name: "slow_vault", description: "Sold per query", price_tags: [tag({ type: "fixed", amount: PRICES.flat.config })] },
      { name: "vault_by_limit", description: "Per row by LIMIT", price_tags: [tag({ type: "per_row", amount_per_item: PRICES.perItem.config, quote: "limit" })] },
    ],
  });
  mcp = await connectMcp(server.url);
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  await mcp?.close();
  await sandbox?.stop();
});
beforeEach(() => sandbox.resetProxy());

/** What must not move: the payer's and the seller's balances, and the ledger. */
async function balances(payer: Payer) {
  const { devnet } = sandbox;
  return { payer: await devnet.balanceOf(payer.address), payTo: await devnet.balanceOf(devnet.payTo), ledger: server.ledgerRows().length };
}

describe("what can fail on a value is refused before payment", () => {
  const probes: [string, (id: number) => string, RegExp][] = [
    ["abs() of an integer column (overflow on -2^63)", (id) => `SELECT id FROM vault WHERE id = ${id} AND abs(n) > 0 LIMIT 1`, /abs\(n\) fails when a value is -9223372036854775808.*abs\(CAST\(n AS REAL\)\)/],
    ["a LIKE pattern read from the table (over 50,000 bytes fails)", (id) => `SELECT id FROM vault WHERE id = ${id} AND 'x' LIKE s LIMIT 1`, /LIKE pattern 's' is read from the table.*literal/],
    ["a GLOB pattern built from a column", (id) => `SELECT id FROM vault WHERE id = ${id} AND 'x' GLOB '*' || s LIMIT 1`, /GLOB pattern .* is read from the table/],
  ];

  test.each(probes)("%s: 400 for the trap row and any other, no /verify, nothing charged", async (_name, probe, message) => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    const answers: string[] = [];
    for (const id of [TRAP_ROW, TRAP_ROW + 1]) {
      const response = await payer.fetch(queryUrl(server.url, probe(id)));
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toStartWith("text/plain");
      answers.push(await response.text());
    }
    expect(answers[0]).toMatch(message);
    expect(answers[1]).toBe(answers[0]!);
    expect(sandbox.proxy.counts.verify).toBe(0);
    expect(payer.signatures).toEqual([]);
    expect(await balances(payer)).toEqual(before);
  });

  test.each([
    ["abs() of a REAL column", "SELECT id FROM vault WHERE abs(r) > 1 LIMIT 3"],
    ["abs() of a CAST to REAL", "SELECT id FROM vault WHERE abs(CAST(n AS REAL)) > 1 LIMIT 3"],
    ["a literal LIKE pattern", "SELECT id FROM vault WHERE s LIKE 'v1%' LIMIT 3"],
  ])("%s is sold as usual", async (_name, sql) => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const response = await payer.fetch(queryUrl(server.url, sql));
    expect(response.status).toBe(200);
    expect((await arrowResult(response)).rows.length).toBeGreaterThan(0);
  });

  test("the same probes on a table whose quote counts rows are accepted: its 402 states the count anyway", async () => {
    const response = await fetch(queryUrl(server.url, "SELECT id FROM items WHERE abs(id) < 10 AND name LIKE name"));
    expect(response.status).toBe(402);
  });

  test("a literal LIKE pattern over 50,000 bytes is refused on every table, free ones included", async () => {
    const response = await fetch(queryUrl(server.url, `SELECT id FROM kinds WHERE label LIKE replace('${"a".repeat(300)}', 'a', '${"b".repeat(200)}')`));
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/pattern .* can be 60,000 bytes long; SQLite refuses patterns over 50,000 bytes/);
  });
});

describe("a LIMIT within max_rows is required, so OFFSET cannot count the table", () => {
  test.each([
    ["no LIMIT", "SELECT id FROM vault"],
    ["a LIMIT over max_rows, OFFSET 0", "SELECT id FROM vault LIMIT 1000000 OFFSET 0"],
    ["a LIMIT over max_rows, OFFSET 29", "SELECT id FROM vault LIMIT 1000000 OFFSET 29"],
    ["a LIMIT over max_rows, OFFSET 31", "SELECT id FROM vault LIMIT 1000000 OFFSET 31"],
  ])("%s: 400 before any payment, the same words whatever the OFFSET", async (_name, sql) => {
    const response = await fetch(queryUrl(server.url, sql));
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(
      `Queries of table 'vault' need a LIMIT of at most ${MAX_ROWS} (this table does not tell how many rows a query matches before payment): add LIMIT n, e.g. LIMIT ${MAX_ROWS}`,
    );
  });

  test("LIMIT max_rows OFFSET k is sold, whatever k", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    for (const offset of [0, 29, 31]) {
      const response = await payer.fetch(queryUrl(server.url, `SELECT id FROM vault LIMIT ${MAX_ROWS} OFFSET ${offset}`));
      expect(response.status).toBe(200);
      expect((await arrowResult(response)).rows.length).toBe(Math.max(0, 30 - offset));
    }
  });
});

describe("a failure after /verify gets one answer, no earlier than the time limit, and costs nothing", () => {
  const failures: [string, string][] = [
    ["the time limit", `SELECT id FROM slow_vault WHERE length(strftime('${"%Y-%m-%dT%H:%M:%f".repeat(100)}', id)) < 0 LIMIT 1`],
    ["a DATE value that is not a date", `SELECT id, d FROM vault WHERE id = ${TRAP_ROW} LIMIT 1`],
  ];

  test("both failures: the same status and text, after the time limit, verified and never settled", async () => {
    const texts: string[] = [];
    for (const [, sql] of failures) {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const before = await balances(payer);
      sandbox.resetProxy();
      const started = performance.now();
      const response = await payer.fetch(queryUrl(server.url, sql));
      const elapsed = performance.now() - started;
      expect(response.status).toBe(400);
      texts.push(await response.text());
      expect(elapsed).toBeGreaterThanOrEqual(TIME_LIMIT_MS - 50);
      expect(sandbox.proxy.counts.verify).toBe(1);
      expect(sandbox.proxy.counts.settle).toBe(0);
      expect(await balances(payer)).toEqual(before);
    }
    expect(texts[0]).toBe(new PaidQueryFailedError(TIME_LIMIT_MS).message);
    expect(texts[1]).toBe(texts[0]!);
  }, 30_000);

  test("each such failure counts as a refused payment: past max_refused_payments_per_minute, 429 before /verify", async () => {
    const payTo = sandbox.devnet.payTo;
    const limited = await sandbox.serve({
      limits: { max_rows: MAX_ROWS, query_timeout_ms: 300, max_refused_payments_per_minute: 2 },
      server: { trust_proxy: "X-Forwarded-For" },
      tables: [{ name: "vault", price_tags: [{ type: "fixed", pay_to: payTo, token: TOKEN_KEY, amount: PRICES.flat.config }] }],
    });
    try {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const client = { "x-forwarded-for": "198.51.100.23" };
      const url = queryUrl(limited.url, failures[1]![1]);
      for (let i = 0; i < 2; i++) expect((await payer.fetch(url, { headers: client })).status).toBe(400);
      sandbox.resetProxy();
      const refused = await payer.fetch(url, { headers: client });
      expect(refused.status).toBe(429);
      expect(sandbox.proxy.counts.verify).toBe(0);
      // Another client is not affected.
      expect((await payer.fetch(url, { headers: { "x-forwarded-for": "198.51.100.24" } })).status).toBe(400);
    } finally {
      await limited.stop();
    }
  }, 30_000);

  test("on a table whose quote counts rows, a failure keeps its own words", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const response = await payer.fetch(queryUrl(server.url, "SELECT id FROM items WHERE abs(-9223372036854775807 - id) > 0"));
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/integer overflow/);
  });
});

describe("quote: limit prices per row by the LIMIT, before any data is read", () => {
  const price = PRICES.perItem.units;

  test("no LIMIT is a 400 before payment", async () => {
    const response = await fetch(queryUrl(server.url, "SELECT id FROM vault_by_limit WHERE id < 5"));
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/need a LIMIT of at most 50/);
  });

  test("HTTP: the 402 says up to N rows and costs N rows; 3 rows delivered for LIMIT 10, charged once", async () => {
    const sql = "SELECT id FROM vault_by_limit WHERE id <= 3 LIMIT 10";
    const quote = await fetch(queryUrl(server.url, sql));
    expect(quote.status).toBe(402);
    const required = decodeHeader(quote.headers.get("PAYMENT-REQUIRED"));
    expect(required.resource.description).toBe(`${QUERY_DESCRIPTION} - up to 10 rows`);
    expect(required.accepts.map((offer: { amount: string }) => offer.amount)).toEqual([String(10n * price)]);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    const response = await payer.fetch(queryUrl(server.url, sql));
    expect(response.status).toBe(200);
    expect((await arrowResult(response)).rows.map((row) => Number(row.id))).toEqual([1, 2, 3]);
    expect(await balances(payer)).toEqual({ payer: before.payer - 10n * price, payTo: before.payTo + 10n * price, ledger: before.ledger + 1 });
  });

  test("the quote is the same whatever the WHERE matches: it tells nothing", async () => {
    const bodies = await Promise.all(
      ["id < 0", "id < 1000", `n = ${SMALLEST_INT64}`].map(async (where) => {
        const response = await fetch(queryUrl(server.url, `SELECT id FROM vault_by_limit WHERE ${where} LIMIT 5`));
        const body = decodeHeader(response.headers.get("PAYMENT-REQUIRED"));
        return { status: response.status, description: body.resource.description, amounts: body.accepts.map((offer: { amount: string }) => offer.amount) };
      }),
    );
    expect(bodies[1]).toEqual(bodies[0]!);
    expect(bodies[2]).toEqual(bodies[0]!);
  });

  test("MCP: the same price and rows, paid in _meta", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    const sql = "SELECT id FROM vault_by_limit WHERE id <= 4 LIMIT 6";
    const { required, paid } = await callPaying(mcp, payer.sign, "query", { sql });
    expect(required.resource.description).toBe(`${QUERY_DESCRIPTION} - up to 6 rows`);
    expect(required.accepts[0]!.amount).toBe(String(6n * price));
    expect(paid.isError).toBeFalsy();
    expect((paid.structuredContent as { rows: unknown[][] }).rows).toEqual([[1], [2], [3], [4]]);
    expect(receiptOf(paid)?.success).toBe(true);
    expect(await balances(payer)).toEqual({ payer: before.payer - 6n * price, payTo: before.payTo + 6n * price, ledger: before.ledger + 1 });
  });

  test("MCP: no LIMIT is refused before payment", async () => {
    const result = await mcp.call("query", { sql: "SELECT id FROM vault_by_limit" });
    expect(refusalOf(result)).toMatchObject({ status: 400 });
    expect(() => paymentRequiredOf(result)).toThrow();
  });
});
