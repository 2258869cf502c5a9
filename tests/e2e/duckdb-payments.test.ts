/**
 * The same money on tables served through DuckDB (DESIGN.md §14 "Everything else is
 * engine-neutral"), through the real listening server, the devnet's facilitator and x402's own
 * client: a per_row price from DuckDB's count of Parquet files, the rows delivered being the rows
 * priced, charged once; MCP; a fixed price on a CSV file with its LIMIT rule, paid as CSV and as
 * Parquet, and a replay served the bytes it bought. Balances read on chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { PRICES, QUERY_DESCRIPTION, SANDBOX_START_TIMEOUT_MS, TOKEN_KEY, startPaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl, type Payer } from "../support/paying.ts";
import { callPaying, connectMcp, receiptOf, type McpSession } from "../mcp/support.ts";

const FUNDS = 10_000_000n;
let sandbox: PaidSandbox;
let server: PaidServer;
let mcp: McpSession;

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  const duck = await DuckDBInstance.create(":memory:");
  const writer = await duck.connect();
  const rows = (from: number, to: number) =>
    `SELECT x AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' + x * INTERVAL 1 MINUTE AS at, 'acct-' || (x % 7) AS account, (x * 1.25)::DECIMAL(14,2) AS amount FROM range(${from}, ${to}) t(x)`;
  await writer.run(`
    COPY (${rows(1, 101)}) TO '${join(sandbox.dir, "ledger-1.parquet")}' (FORMAT parquet);
    COPY (${rows(101, 201)}) TO '${join(sandbox.dir, "ledger-2.parquet")}' (FORMAT parquet);
    COPY (SELECT x AS id, 'acct-' || x AS account FROM range(1, 21) t(x)) TO '${join(sandbox.dir, "flat.csv")}' (HEADER);
  `);
  writer.closeSync();
  duck.closeSync();
  const tag = (fields: Record<string, unknown>) => ({ pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, ...fields });
  server = await sandbox.serve({
    databases: { lake: { duckdb: ":memory:" } },
    tables: [
      { name: "ledger_rows", files: "./ledger-*.parquet", price_tags: [tag({ type: "per_row", amount_per_item: PRICES.perItem.config })] },
      { name: "flat_rows", files: "./flat.csv", price_tags: [tag({ type: "fixed", amount: PRICES.flat.config })] },
    ],
  });
  mcp = await connectMcp(server.url);
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  await mcp?.close();
  await sandbox?.stop();
});

async function balances(payer: Payer) {
  const { devnet } = sandbox;
  return { payer: await devnet.balanceOf(payer.address), payTo: await devnet.balanceOf(devnet.payTo), ledger: server.ledgerRows().length };
}

describe("per_row on Parquet files", () => {
  test("quoted from DuckDB's count, paid, the rows delivered exactly, charged once", async () => {
    const sql = "SELECT id, at, account, amount FROM ledger_rows WHERE account = 'acct-3' ORDER BY id";
    const expected = Array.from({ length: 200 }, (_, i) => i + 1).filter((id) => id % 7 === 3);
    const quote = await fetch(queryUrl(server.url, sql));
    expect(quote.status).toBe(402);
    const required = decodeHeader(quote.headers.get("PAYMENT-REQUIRED"));
    expect(required.resource.description).toBe(`${QUERY_DESCRIPTION} - ${expected.length} rows`);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    const response = await payer.fetch(queryUrl(server.url, sql));
    expect(response.status).toBe(200);
    const { rows } = await arrowResult(response);
    expect(rows.map((row) => Number(row.id))).toEqual(expected);
    const price = BigInt(expected.length) * PRICES.perItem.units;
    expect(await balances(payer)).toEqual({ payer: before.payer - price, payTo: before.payTo + price, ledger: before.ledger + 1 });
  });

  test("MCP: the same price and rows, paid in _meta", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { required, paid } = await callPaying(mcp, payer.sign, "query", { sql: "SELECT id, amount FROM ledger_rows WHERE id <= 3 ORDER BY id" });
    expect(required.accepts[0]!.amount).toBe(String(3n * PRICES.perItem.units));
    expect(paid.isError).toBeFalsy();
    expect((paid.structuredContent as { rows: unknown[][] }).rows).toEqual([[1, "1.25"], [2, "2.50"], [3, "3.75"]]);
    expect(receiptOf(paid)?.success).toBe(true);
  });

  test("a query DuckDB cannot run with SQLite's meaning: 400 before any price, nothing charged", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    const response = await payer.fetch(queryUrl(server.url, "SELECT id FROM ledger_rows WHERE date('now') > at"));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("not available on tables served from DuckDB");
    expect(await balances(payer)).toEqual(before);
  });
});

describe("fixed prices and replays on a CSV file", () => {
  test("a fixed-price table needs a LIMIT; paid as CSV; a replay is the same bytes", async () => {
    expect((await fetch(queryUrl(server.url, "SELECT id FROM flat_rows"))).status).toBe(400);
    const sql = "SELECT id, account FROM flat_rows WHERE id <= 4 ORDER BY id LIMIT 10";
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    const url = `${queryUrl(server.url, sql)}&format=csv`;
    const response = await payer.fetch(url);
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toBe("id,account\r\n1,acct-1\r\n2,acct-2\r\n3,acct-3\r\n4,acct-4\r\n");
    const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": payer.signatures.at(-1)! } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
    expect(await balances(payer)).toEqual({ payer: before.payer - PRICES.flat.units, payTo: before.payTo + PRICES.flat.units, ledger: before.ledger + 1 });
  });

  test("paid as Arrow: the values DuckDB read from the CSV", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const response = await payer.fetch(queryUrl(server.url, "SELECT account FROM flat_rows WHERE id > 18 ORDER BY id LIMIT 5"));
    expect(response.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect([...table.getChild("account")!]).toEqual(["acct-19", "acct-20"]);
  });
});
