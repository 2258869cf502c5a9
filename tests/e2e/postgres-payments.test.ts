/**
 * The same money on PostgreSQL tables (DESIGN.md §14 "Everything else is engine-neutral"), through
 * the real listening server, the devnet's facilitator and x402's own client: per_row prices from a
 * PostgreSQL count, the rows delivered being the rows priced (a concurrent writer makes the paid
 * read differ: 402, nothing charged), fixed prices with their LIMIT rule, replays served the bytes
 * they bought, MCP, and formats. Balances read on chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PRICES, QUERY_DESCRIPTION, SANDBOX_START_TIMEOUT_MS, TOKEN_KEY, startPaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl, type Payer } from "../support/paying.ts";
import { callPaying, connectMcp, receiptOf, type McpSession } from "../mcp/support.ts";
import { usePostgres } from "../support/postgres.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";

const pg = usePostgres();
const FUNDS = 10_000_000n;
let sandbox: PaidSandbox;
let server: PaidServer;
let mcp: McpSession;
let admin: SQL;

beforeAll(async () => {
  admin = new SQL(pg.url);
  await admin.unsafe(`
    CREATE TABLE ledger_rows (id bigint PRIMARY KEY, at timestamptz NOT NULL, account text NOT NULL, amount numeric(14,2));
    INSERT INTO ledger_rows SELECT g, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute', 'acct-' || (g % 7), g * 1.25 FROM generate_series(1, 200) g;
    CREATE VIEW flat_rows AS SELECT * FROM ledger_rows;
  `);
  sandbox = await startPaidSandbox();
  const tag = (fields: Record<string, unknown>) => ({ pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, ...fields });
  server = await sandbox.serve({
    databases: { warehouse: { postgres: pg.url } },
    tables: [
      { name: "ledger_rows", price_tags: [tag({ type: "per_row", amount_per_item: PRICES.perItem.config })] },
      { name: "flat_rows", price_tags: [tag({ type: "fixed", amount: PRICES.flat.config })] },
    ],
  });
  mcp = await connectMcp(server.url);
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  await mcp?.close();
  await sandbox?.stop();
  await admin?.close();
});

async function balances(payer: Payer) {
  const { devnet } = sandbox;
  return { payer: await devnet.balanceOf(payer.address), payTo: await devnet.balanceOf(devnet.payTo), ledger: server.ledgerRows().length };
}

describe("per_row on PostgreSQL", () => {
  test("quoted from a PostgreSQL count, paid, the rows delivered exactly, charged once", async () => {
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
    expect(rows[0]!.amount).toBeDefined();
    const price = BigInt(expected.length) * PRICES.perItem.units;
    expect(await balances(payer)).toEqual({ payer: before.payer - price, payTo: before.payTo + price, ledger: before.ledger + 1 });
  });

  test("rows added while /verify runs: the paid read has 6 rows, not the 5 priced: 402 with the new offers, nothing charged", async () => {
    const sql = "SELECT id FROM ledger_rows WHERE id > 195";
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await balances(payer);
    // The count that priced the payment is read before /verify; the rows after it.
    sandbox.proxy.setBehaviour({ verify: { kind: "hook", before: async () => void (await admin`INSERT INTO ledger_rows VALUES (201, now(), 'acct-x', 1)`) } });
    try {
      const response = await payer.fetch(queryUrl(server.url, sql));
      expect(response.status).toBe(402);
      expect((await response.json()).error).toBe(PAYMENT_MESSAGES.rowsChanged(5, 6));
      expect(await balances(payer)).toEqual(before);
    } finally {
      sandbox.resetProxy();
      await admin`DELETE FROM ledger_rows WHERE id = 201`;
    }
  });

  test("rows added after the quote: the payment matches no current offer, 402 with the offers for the rows now, nothing charged", async () => {
    const sql = "SELECT id FROM ledger_rows WHERE id > 196";
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const quoted = await fetch(queryUrl(server.url, sql));
    const signed = await payer.sign(decodeHeader(quoted.headers.get("PAYMENT-REQUIRED")));
    await admin`INSERT INTO ledger_rows VALUES (201, now(), 'acct-x', 1)`;
    try {
      const before = await balances(payer);
      const response = await fetch(queryUrl(server.url, sql), { headers: { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(signed)).toString("base64") } });
      expect(response.status).toBe(402);
      const body = await response.json();
      expect(body.resource.description).toEndWith(" - 5 rows");
      expect(await balances(payer)).toEqual(before);
    } finally {
      await admin`DELETE FROM ledger_rows WHERE id = 201`;
    }
  });

  test("MCP: the same price and rows, paid in _meta", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { required, paid } = await callPaying(mcp, payer.sign, "query", { sql: "SELECT id, amount FROM ledger_rows WHERE id <= 3 ORDER BY id" });
    expect(required.accepts[0]!.amount).toBe(String(3n * PRICES.perItem.units));
    expect(paid.isError).toBeFalsy();
    expect((paid.structuredContent as { rows: unknown[][] }).rows).toEqual([[1, "1.25"], [2, "2.50"], [3, "3.75"]]);
    expect(receiptOf(paid)?.success).toBe(true);
  });
});

describe("fixed prices and replays on PostgreSQL", () => {
  test("a fixed-price table needs a LIMIT; paid as CSV; a replay is the same bytes, and 402 once the data changed", async () => {
    expect((await fetch(queryUrl(server.url, "SELECT id FROM flat_rows"))).status).toBe(400);
    const sql = "SELECT id, account FROM flat_rows WHERE id <= 4 ORDER BY id LIMIT 10";
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const url = `${queryUrl(server.url, sql)}&format=csv`;
    const response = await payer.fetch(url);
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toBe("id,account\r\n1,acct-1\r\n2,acct-2\r\n3,acct-3\r\n4,acct-4\r\n");
    const signature = payer.signatures.at(-1)!;
    const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": signature } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
    await admin`UPDATE ledger_rows SET account = 'changed' WHERE id = 2`;
    try {
      const changed = await fetch(url, { headers: { "PAYMENT-SIGNATURE": signature } });
      expect(changed.status).toBe(402);
      expect(await changed.text()).not.toContain("changed,");
    } finally {
      await admin`UPDATE ledger_rows SET account = 'acct-2' WHERE id = 2`;
    }
  });
});
