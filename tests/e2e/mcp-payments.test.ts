/**
 * Agents over MCP (ARCHITECTURE.md §12) against a real listening server and the devnet (anvil, the
 * EIP-3009 test token, a real x402 facilitator): the official MCP SDK client over Streamable HTTP,
 * payments signed by x402's own client and carried as the x402 V2 MCP transport defines
 * (`_meta["x402/payment"]` in, `_meta["x402/payment-response"]` out). Every paid case checks the
 * exact amount on chain and the balances; every refusal checks that nothing moved.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { extractDiscoveryInfo } from "@x402/extensions/bazaar";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import type { PaymentPayload } from "@x402/core/types";
import { PRICES, SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, queryUrl, type Payer } from "../support/paying.ts";
import { callPaying, connectMcp, paymentRequiredOf, receiptOf, refusalOf, textOf, type McpSession } from "../mcp/support.ts";

const FUNDS = 1_000_000n;
/** The MCP row cap of this server: small, so that the 200 items exceed it. */
const CAP = 50;

let sandbox: PaidSandbox;
let server: PaidServer;
let mcp: McpSession;

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  server = await sandbox.serve({ limits: { mcp_max_rows: CAP } });
  mcp = await connectMcp(server.url);
}, SANDBOX_START_TIMEOUT_MS);
afterAll(async () => {
  await mcp?.close();
  await sandbox?.stop();
});
beforeEach(() => sandbox.resetProxy());

/** Payer, pay_to and ledger now; compare later to prove what was (or was not) charged. */
async function snapshot(payer: Payer) {
  const { devnet } = sandbox;
  return { payer: await devnet.balanceOf(payer.address), payTo: await devnet.balanceOf(devnet.payTo), ledger: server.ledgerRows().length };
}

/** The SQLite rows of `sql` as the structured rows of an MCP result (integers within 2^53 here). */
const expectedRows = (sql: string) => sandbox.sqliteRows(sql).map((row) => Object.values(row).map((v) => (typeof v === "bigint" ? Number(v) : v)));

/** Pays for `sql` over MCP and checks everything a payment must leave behind; returns what it paid. */
async function payQuery(sql: string, price: bigint) {
  const payer = await newPayer(sandbox.devnet, FUNDS);
  const before = await snapshot(payer);
  const { required, payload, paid } = await callPaying(mcp, payer.sign, "query", { sql });
  expect(required.resource.url).toBe(queryUrl(server.url, sql));
  expect(required.accepts[0]!.amount).toBe(String(price));
  expect(paid.isError).toBeFalsy();
  expect((paid.structuredContent as { rows: unknown[] }).rows).toEqual(expectedRows(sql));
  const receipt = receiptOf(paid)!;
  expect(receipt).toEqual({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/i), network: sandbox.devnet.network, payer: payer.address });
  expect(await sandbox.transfersIn(receipt.transaction as `0x${string}`)).toEqual([{ from: payer.address, to: sandbox.devnet.payTo, value: price }]);
  expect(await snapshot(payer)).toEqual({ payer: before.payer - price, payTo: before.payTo + price, ledger: before.ledger + 1 });
  return { payer, payload, paid, receipt };
}

describe("tools and free calls", () => {
  test("tools/list: list_tables, describe_table and query, whose description states the dialect, the row cap and the payment keys", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["list_tables", "describe_table", "query"]);
    const query = tools.find((tool) => tool.name === "query")!;
    expect(query.inputSchema).toMatchObject({ type: "object", required: ["sql"] });
    for (const phrase of ["GROUP BY", "aggregates", `at most ${CAP} rows`, '_meta["x402/payment"]', '_meta["x402/payment-response"]']) {
      expect(query.description).toContain(phrase);
    }
  });

  test("list_tables is free: columns where the schema is free, none where it is sold, prices in token units", async () => {
    const result = await mcp.call("list_tables");
    const { tables, query_row_limit } = result.structuredContent as { tables: any[]; query_row_limit: number };
    expect(query_row_limit).toBe(CAP);
    const byName = Object.fromEntries(tables.map((table) => [table.name, table]));
    expect(byName.kinds).toMatchObject({ requires_payment: false, prices: ["Free queries"] });
    expect(byName.kinds.columns.map((c: any) => `${c.name} ${c.type}`)).toContain("at Timestamp<MILLISECOND, UTC>");
    expect(byName.items.columns).toBeNull();
    expect(byName.items.prices).toEqual(["0.001 tUSDC per row on devnet", "0.0005 tUSDC per row on devnet, for results of 100 rows or more", "0.01 tUSDC for the table's metadata on devnet"]);
    expect(byName.flat_items.prices).toEqual(["0.05 tUSDC per query on devnet"]);
    expect(textOf(result)).toBe(JSON.stringify(result.structuredContent));
    expect(sandbox.proxy.requests).toEqual([]);
  });

  test("a free query: typed JSON values, int64 beyond 2^53 a string of its exact digits, nothing paid", async () => {
    const result = await mcp.call("query", { sql: "SELECT id, big, data, day, at FROM kinds ORDER BY id" });
    expect(result.isError).toBeFalsy();
    expect(receiptOf(result)).toBeUndefined();
    const { columns, rows, row_count } = result.structuredContent as any;
    expect(columns).toEqual([
      { name: "id", type: "Int64" },
      { name: "big", type: "Int64" },
      { name: "data", type: "Binary" },
      { name: "day", type: "Date32<DAY>" },
      { name: "at", type: "Timestamp<MILLISECOND, UTC>" },
    ]);
    expect(row_count).toBe(4);
    // int64 beyond 2^53 reaches the agent as a string of its exact digits (DESIGN §16): the SDK
    // client's JSON.parse would have rounded a number.
    expect(rows[0]).toEqual([1, "9007199254740993", "AQID", "2026-01-31", "2026-01-31T12:34:56.000Z"]);
    expect(rows[1]).toEqual([2, "-9223372036854775808", "", "1999-12-31", "2026-01-31T12:34:56.789Z"]);
    expect(rows[2]).toEqual([3, null, null, null, null]);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    expect(sandbox.proxy.requests).toEqual([]);
  });
});

describe("paid queries", () => {
  test("per_row: a PaymentRequired bound to the SQL's HTTP URL, paid through _meta for the exact row count", async () => {
    const sql = "SELECT id, name FROM items WHERE id BETWEEN 1 AND 12";
    const { payload, paid } = await payQuery(sql, 12n * PRICES.perItem.units);
    expect(paid.structuredContent).toMatchObject({ columns: [{ name: "id", type: "Int64" }, { name: "name", type: "Utf8" }], row_count: 12 });
    expect(server.ledgerRows().at(-1)).toMatchObject({ resource_url: queryUrl(server.url, sql), query: sql, rows: 12, amount: "12000", table_name: "items" });
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
    // The 402 advertised bazaar and payment-identifier; the payload echoes them, and a
    // facilitator's own bazaar code catalogs the query endpoint (without the query string) as an
    // HTTP GET whose example is this SQL.
    expect(Object.keys(payload.extensions ?? {})).toEqual(["bazaar", "payment-identifier"]);
    const discovered = extractDiscoveryInfo(payload, payload.accepted) as any;
    expect(discovered).toMatchObject({ resourceUrl: `${server.url}/api/query`, method: "GET", x402Version: 2 });
    expect(discovered.discoveryInfo.input).toEqual({ type: "http", method: "GET", queryParams: { query: sql } });
  });

  test("fixed: the flat price, once, whatever the row count", async () => {
    const sql = "SELECT id, price FROM flat_items WHERE id <= 30 LIMIT 30";
    const { payload } = await payQuery(sql, PRICES.flat.units);
    // flat_items does not sell its schema: the bazaar example is the result's Arrow schema.
    const bazaar = payload.extensions!.bazaar as { info: { output: { example: unknown } } };
    expect(bazaar.info.output.example).toEqual({
      schema: { fields: [{ name: "id", data_type: "Int64", nullable: true }, { name: "price", data_type: "Float64", nullable: true }] },
    });
  });

  test("a failed settlement: a PaymentRequired tool error with the failed receipt in _meta, and no data", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const sql = "SELECT id, name FROM items WHERE id BETWEEN 190 AND 193";
    const required = paymentRequiredOf(await mcp.call("query", { sql }));
    const before = await snapshot(payer);
    sandbox.proxy.setBehaviour({ settle: { kind: "reply", status: 200, body: { success: false, errorReason: "insufficient_funds", transaction: "", network: sandbox.devnet.network } } });
    const refused = await mcp.call("query", { sql }, { "x402/payment": await payer.sign(required) });
    expect(paymentRequiredOf(refused).error).toContain("could not be settled");
    expect(receiptOf(refused)).toMatchObject({ success: false, errorReason: "insufficient_funds" });
    expect(JSON.stringify(refused)).not.toContain("item-190");
    expect(await snapshot(payer)).toEqual(before);
  });
});

describe("refusals move nothing", () => {
  test("a refused dialect is a tool error naming the construct, before any quote, even with a payment attached", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const required = paymentRequiredOf(await mcp.call("query", { sql: "SELECT id FROM items WHERE id <= 3" }));
    const before = await snapshot(payer);
    sandbox.resetProxy();
    for (const [sql, construct] of [
      ["SELECT count(*) FROM items", "count"],
      ["SELECT category FROM items GROUP BY category", "GROUP BY"],
      ["SELECT a.id FROM items a JOIN items b ON a.id = b.id", "JOIN"],
      ["SELECT DISTINCT category FROM items", "DISTINCT"],
    ]) {
      const refused = refusalOf(await mcp.call("query", { sql: sql! }, { "x402/payment": await payer.sign(required) }));
      expect(refused.status).toBe(400);
      expect(refused.error).toContain(construct!);
    }
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await snapshot(payer)).toEqual(before);
  });

  test("a payment quoted for one SQL and presented for another (same price) is refused, over MCP and over HTTP", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    for (const [quotedSql, otherSql] of [
      ["SELECT id FROM items WHERE id BETWEEN 21 AND 25", "SELECT id FROM items WHERE id BETWEEN 26 AND 30"],
      ["SELECT id FROM flat_items WHERE id < 3 LIMIT 3", "SELECT name FROM flat_items WHERE id > 190 LIMIT 10"],
    ] as const) {
      const payload = await payer.sign(paymentRequiredOf(await mcp.call("query", { sql: quotedSql })));
      const before = await snapshot(payer);
      sandbox.resetProxy();
      const refused = paymentRequiredOf(await mcp.call("query", { sql: otherSql }, { "x402/payment": payload }));
      expect(refused.error).toContain("signed for another resource");
      expect(refused.resource.url).toBe(queryUrl(server.url, otherSql));
      const overHttp = await fetch(queryUrl(server.url, otherSql), { headers: { "PAYMENT-SIGNATURE": encodePayment(payload) } });
      expect(overHttp.status).toBe(402);
      expect((await overHttp.json()).error).toContain("signed for another resource");
      expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
      expect(await snapshot(payer)).toEqual(before);
    }
  });

  test("mcp_max_bytes: a paid result larger than that is refused once read, after /verify and before /settle: nothing charged", async () => {
    const small = await sandbox.serve({ limits: { mcp_max_rows: CAP, mcp_max_bytes: 600 } });
    const session = await connectMcp(small.url);
    try {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const before = { payer: await sandbox.devnet.balanceOf(payer.address), ledger: small.ledgerRows().length };
      const sql = "SELECT id, name FROM items WHERE id <= 40";
      const { required, paid } = await callPaying(session, payer.sign, "query", { sql });
      expect(required.accepts[0]!.amount).toBe(String(40n * PRICES.perItem.units));
      const refused = refusalOf(paid);
      expect(refused.status).toBe(400);
      expect(refused.error).toStartWith("The result is larger than the 600 bytes (as Apache Arrow) one MCP call may return (limits.mcp_max_bytes); this call charged nothing.");
      expect(refused.error).toEndWith(`GET ${queryUrl(small.url, sql)}`);
      expect(receiptOf(paid)).toBeUndefined();
      expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
      expect({ payer: await sandbox.devnet.balanceOf(payer.address), ledger: small.ledgerRows().length }).toEqual(before);
      // Within it, served.
      expect((await session.call("query", { sql: "SELECT id FROM kinds LIMIT 2" })).isError).toBeFalsy();
    } finally {
      await session.close();
      await small.stop();
    }
  });

  test("mcp_max_rows: a larger result is refused, never truncated, with the exact HTTP URL, before any payment", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await snapshot(payer);
    // per_row: the count that would price it refuses it instead of a quote.
    const perRow = "SELECT id FROM items WHERE id <= 60";
    const tooMany = refusalOf(await mcp.call("query", { sql: perRow }));
    expect(tooMany.status).toBe(400);
    expect(tooMany.error).toContain(`The result has 60 rows, more than the ${CAP} one MCP call may return`);
    expect(tooMany.error).toContain(`GET ${queryUrl(server.url, perRow)}`);
    // That URL is the HTTP query of the same SQL: quoted there, for the same 60 rows.
    expect(decodeHeader((await fetch(queryUrl(server.url, perRow))).headers.get("PAYMENT-REQUIRED")).accepts[0].amount).toBe("60000");

    // fixed: never counted (a count would say for nothing how many rows any WHERE matches): a
    // LIMIT within the cap is needed, before a quote and before a payment (valid for any flat_items query) is taken.
    const anyFlat = await payer.sign(paymentRequiredOf(await mcp.call("query", { sql: "SELECT id FROM flat_items LIMIT 5" })));
    for (const flat of ["SELECT id FROM flat_items", "SELECT id FROM flat_items WHERE id <= 3", `SELECT id FROM flat_items LIMIT ${CAP + 1}`]) {
      const refused = refusalOf(await mcp.call("query", { sql: flat }));
      expect(refused.status).toBe(400);
      expect(refused.error).toStartWith(`This table is sold at a fixed price per query: over MCP, a query of it needs a LIMIT of at most ${CAP}`);
      expect(refused.error).not.toMatch(/\d+ rows/);
      const withPayment = refusalOf(await mcp.call("query", { sql: flat }, { "x402/payment": { ...anyFlat, resource: { ...anyFlat.resource!, url: queryUrl(server.url, flat) } } }));
      expect(withPayment.error).toContain(`GET ${queryUrl(server.url, flat)}`);
    }

    // Exactly the cap, and a LIMIT within it (no count needed), are served.
    expect((await mcp.call("query", { sql: "SELECT id FROM kinds LIMIT 50" })).isError).toBeFalsy();
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    expect(await snapshot(payer)).toEqual(before);
    const atCap = await payQuery(`SELECT id FROM items WHERE id <= ${CAP}`, BigInt(CAP) * PRICES.perItem.units);
    expect((atCap.paid.structuredContent as { row_count: number }).row_count).toBe(CAP);
  });

  test('a malformed _meta["x402/payment"] is a tool error saying what is wrong; nothing is asked of the facilitator', async () => {
    const refused = refusalOf(await mcp.call("query", { sql: "SELECT id FROM items WHERE id = 1" }, { "x402/payment": { x402Version: 2, accepted: {}, payload: {} } }));
    expect(refused.status).toBe(400);
    expect(refused.error).toContain('MCP _meta["x402/payment"] is not a well-formed x402 V2 exact EVM payment payload');
    expect(sandbox.proxy.requests).toEqual([]);
  });

  test("a query that is not valid is named first, before a malformed payment", async () => {
    const refused = refusalOf(await mcp.call("query", { sql: "SELECT nope FROM items" }, { "x402/payment": { x402Version: 2, accepted: {}, payload: {} } }));
    expect(refused.status).toBe(400);
    expect(refused.error).toContain("nope");
    expect(refused.error).not.toContain("x402/payment");
  });
});

describe("describe_table", () => {
  test("paid like GET /api/table/{name}: a PaymentRequired for the table URL, then the schema and price tags", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const before = await snapshot(payer);
    const { required, paid } = await callPaying(mcp, payer.sign, "describe_table", { name: "items" });
    expect(required.resource).toEqual({ url: `${server.url}/api/table/items`, description: "Metadata of table 'items'", mimeType: "application/json" });
    expect(required.accepts.map((offer) => offer.amount)).toEqual([String(PRICES.metadata.units)]);
    expect(JSON.stringify(required)).not.toContain("category"); // the schema is what is sold
    const document = paid.structuredContent as any;
    expect(document.table_name).toBe("items");
    expect(document.schema.fields.map((f: any) => `${f.name} ${f.data_type}`)).toEqual(["id Int64", "name Utf8", "price Float64", "category Utf8"]);
    expect(document.price_tags).toHaveLength(3);
    const receipt = receiptOf(paid)!;
    expect(await sandbox.transfersIn(receipt.transaction as `0x${string}`)).toEqual([{ from: payer.address, to: sandbox.devnet.payTo, value: PRICES.metadata.units }]);
    expect(await snapshot(payer)).toEqual({ payer: before.payer - PRICES.metadata.units, payTo: before.payTo + PRICES.metadata.units, ledger: before.ledger + 1 });
    expect(server.ledgerRows().at(-1)).toMatchObject({ resource_url: `${server.url}/api/table/items`, query: null, table_name: "items" });
  });

  test("free for a table without a metadata price; an unknown table is a 404 tool error", async () => {
    const free = await mcp.call("describe_table", { name: "kinds" });
    expect(free.isError).toBeFalsy();
    expect((free.structuredContent as any).schema.fields).toHaveLength(11);
    expect(refusalOf(await mcp.call("describe_table", { name: "nope" }))).toEqual({ status: 404, error: "Table 'nope' not found" });
    expect(sandbox.proxy.requests).toEqual([]);
  });
});

describe("one ledger for both transports", () => {
  test("the same payment for the same query is served again without a second transfer, over MCP and then over HTTP", async () => {
    const sql = "SELECT id, name, price FROM items WHERE id BETWEEN 140 AND 147";
    const { payer, payload, paid, receipt } = await payQuery(sql, 8n * PRICES.perItem.units);
    const before = await snapshot(payer);
    sandbox.resetProxy();

    const again = await mcp.call("query", { sql }, { "x402/payment": payload });
    expect(again.structuredContent).toEqual(paid.structuredContent);
    expect(receiptOf(again)).toEqual(receipt);

    const overHttp = await fetch(queryUrl(server.url, sql), { headers: { "PAYMENT-SIGNATURE": encodePayment(payload) } });
    expect(decodeHeader(overHttp.headers.get("PAYMENT-RESPONSE"))).toEqual(receipt);
    expect((await arrowResult(overHttp)).rows).toEqual(sandbox.sqliteRows(sql));

    expect(sandbox.proxy.requests).toEqual([]);
    expect(await snapshot(payer)).toEqual(before);
  });

  test("payment-identifier: the same id and payload is served again; the same id with another payload is a 409 tool error", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const sql = "SELECT id FROM flat_items WHERE id BETWEEN 7 AND 9 LIMIT 3";
    const required = paymentRequiredOf(await mcp.call("query", { sql }));
    const id = `pay_${crypto.randomUUID().replaceAll("-", "")}`;
    const withId = (payload: PaymentPayload) => ({ ...payload, extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {}), id) });
    const first = withId(await payer.sign(required));
    const paid = await mcp.call("query", { sql }, { "x402/payment": first });
    expect(receiptOf(paid)?.success).toBe(true);
    const before = await snapshot(payer);
    sandbox.resetProxy();

    const again = await mcp.call("query", { sql }, { "x402/payment": first });
    expect(receiptOf(again)).toEqual(receiptOf(paid));
    const conflict = refusalOf(await mcp.call("query", { sql }, { "x402/payment": withId(await payer.sign(required)) }));
    expect(conflict.status).toBe(409);
    expect(conflict.error).toContain(`'${id}' was already used with another payment`);
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await snapshot(payer)).toEqual(before);
  });
});
