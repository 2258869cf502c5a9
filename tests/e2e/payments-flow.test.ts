/**
 * The paid flow through the real listening server (spec "Authentication"; ARCHITECTURE.md §6): a 402
 * quote, a payment signed by @x402/fetch, settlement on the devnet chain, the Arrow data, the
 * PAYMENT-RESPONSE receipt, the ledger row and `arrow402 payments`. Balances are read on chain.
 */
import { describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import {
  PRICES,
  QUERY_DESCRIPTION,
  TOKEN_SYMBOL,
  usePaidSandbox,
  type PaidSandbox,
  type PaidServer,
} from "../support/paid-server.ts";
import { ARROW_STREAM, arrowResult, decodeHeader, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
/** Smallest units of a 6-decimal token in whole units, as `arrow402 payments` prints them. */
const human = (units: bigint) => (Number(units) / 1e6).toString();

/** The requirement every offer of the fixture tables has, apart from its amount. */
const offer = (amount: bigint) => ({
  scheme: "exact",
  network: sandbox.devnet.network,
  amount: amount.toString(),
  asset: getAddress(sandbox.devnet.token.address),
  payTo: getAddress(sandbox.devnet.payTo),
  maxTimeoutSeconds: 300,
  extra: { name: sandbox.devnet.token.name, version: sandbox.devnet.token.version },
});

describe("per_row query", () => {
  test("402, pay with @x402/fetch, 200 Arrow equal to SQLite; receipt, exact balances, ledger row, payments report", async () => {
    const { devnet } = sandbox;
    const sql = "SELECT id, name, price, category FROM items WHERE id <= 12 ORDER BY id";
    const url = queryUrl(server.url, sql);
    const payer = await newPayer(devnet, FUNDS);
    const payToBefore = await devnet.balanceOf(devnet.payTo);

    const quoted = await paymentRequired(url);
    const price = 12n * PRICES.perItem.units;
    expect(quoted.accepts).toEqual([offer(price)]);

    const response = await payer.fetch(url);
    const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
    const { rows } = await arrowResult(response);
    expect(rows).toEqual(sandbox.sqliteRows(sql));
    expect(rows).toHaveLength(12);
    expect(receipt).toEqual({ success: true, transaction: expect.stringMatching(TX_HASH), network: devnet.network, payer: payer.address });

    // Exactly the quoted amount, from the payer to pay_to, in the transaction of the receipt.
    expect(await devnet.balanceOf(payer.address)).toBe(FUNDS - price);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + price);
    expect(await sandbox.transfersIn(receipt.transaction)).toEqual([{ from: payer.address, to: getAddress(devnet.payTo), value: price }]);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });

    expect(server.ledgerRows()).toEqual([
      expect.objectContaining({
        table_name: "items",
        resource_url: url,
        query: sql,
        rows: 12,
        amount: price.toString(),
        asset: getAddress(devnet.token.address),
        network: devnet.network,
        payer: payer.address,
        pay_to: getAddress(devnet.payTo),
        tx_hash: receipt.transaction,
      }),
    ]);

    const cli = Bun.spawnSync(["bun", "src/main.ts", "payments", "--config", server.configPath], { stdout: "pipe", stderr: "pipe" });
    const printed = cli.stdout.toString();
    expect({ exitCode: cli.exitCode, stderr: cli.stderr.toString() }).toEqual({ exitCode: 0, stderr: "" });
    expect(printed).toContain(receipt.transaction);
    expect(printed).toContain(payer.address);
    expect(printed).toContain(url);
    expect(printed).toMatch(new RegExp(`items\\s+12 rows\\s+${human(price)} ${TOKEN_SYMBOL}`));
    const totals = printed.slice(printed.indexOf("Totals"));
    expect(totals).toMatch(new RegExp(`items\\s+${human(price)} ${TOKEN_SYMBOL}.*\\(1 payment\\)`));
  });

  test("the 402 body and the base64 PAYMENT-REQUIRED header carry the same JSON, with the row count and no row data", async () => {
    const sql = "SELECT name, category FROM items WHERE id BETWEEN 40 AND 46";
    const url = queryUrl(server.url, sql);
    const response = await fetch(url);
    expect(response.status).toBe(402);
    expect(response.headers.get("content-type")).toContain("application/json");
    const text = await response.text();
    const header = Buffer.from(response.headers.get("PAYMENT-REQUIRED") ?? "", "base64").toString("utf8");
    expect(JSON.parse(header)).toEqual(JSON.parse(text));
    expect(JSON.parse(text)).toEqual({
      x402Version: 2,
      error: expect.any(String),
      resource: { url, description: `${QUERY_DESCRIPTION} - 7 rows`, mimeType: ARROW_STREAM },
      accepts: [offer(7n * PRICES.perItem.units)],
      // items sells its schema: the bazaar extension describes the query without an example of it.
      extensions: {
        bazaar: { info: { input: { type: "http", method: "GET", queryParams: { query: sql } }, output: { type: "arrow", format: ARROW_STREAM } }, schema: expect.any(Object) },
        "payment-identifier": { info: { required: false }, schema: expect.any(Object) },
      },
    });
    // A paid table never leaks data without payment, in the body or the header.
    for (const row of sandbox.sqliteRows(sql)) {
      expect(text).not.toContain(String(row.name));
      expect(header).not.toContain(String(row.name));
    }
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
  });

  test("offers are cheapest first; the bulk tier applies from min_items and is the amount actually paid", async () => {
    const { devnet } = sandbox;
    const below = await paymentRequired(queryUrl(server.url, `SELECT * FROM items WHERE id < ${PRICES.bulkMinItems}`));
    expect(below.accepts.map((a) => a.amount)).toEqual([String(BigInt(PRICES.bulkMinItems - 1) * PRICES.perItem.units)]);
    const atMin = await paymentRequired(queryUrl(server.url, `SELECT * FROM items WHERE id <= ${PRICES.bulkMinItems}`));
    const rowsAtMin = BigInt(PRICES.bulkMinItems);
    // The bulk tag is second in the config but cheaper, so it is offered first.
    expect(atMin.accepts.map((a) => a.amount)).toEqual([rowsAtMin * PRICES.bulkPerItem.units, rowsAtMin * PRICES.perItem.units].map(String));

    const sql = "SELECT id, price FROM items WHERE id <= 150";
    const url = queryUrl(server.url, sql);
    const bulkPrice = 150n * PRICES.bulkPerItem.units;
    expect((await paymentRequired(url)).accepts.map((a) => a.amount)).toEqual([bulkPrice, 150n * PRICES.perItem.units].map(String));
    const payer = await newPayer(devnet, FUNDS);
    const payToBefore = await devnet.balanceOf(devnet.payTo);
    const response = await payer.fetch(url);
    const { rows } = await arrowResult(response);
    expect(rows).toEqual(sandbox.sqliteRows(sql));
    expect(await devnet.balanceOf(payer.address)).toBe(FUNDS - bulkPrice);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + bulkPrice);
    expect(server.ledgerRows().at(-1)).toMatchObject({ resource_url: url, rows: 150, amount: bulkPrice.toString() });
  });

  test("min_total_amount raises a small result's price, and that raised price is what is paid", async () => {
    const { devnet } = sandbox;
    const all = await paymentRequired(queryUrl(server.url, "SELECT * FROM cheap_items"));
    const allRows = BigInt(sandbox.sqliteRows("SELECT * FROM cheap_items").length);
    expect(allRows * PRICES.cheapPerItem.units).toBeGreaterThan(PRICES.cheapMinTotal.units);
    expect(all.accepts.map((a) => a.amount)).toEqual([String(allRows * PRICES.cheapPerItem.units)]);

    const sql = "SELECT id, name FROM cheap_items WHERE id <= 5";
    const url = queryUrl(server.url, sql);
    expect(5n * PRICES.cheapPerItem.units).toBeLessThan(PRICES.cheapMinTotal.units);
    const quoted = await paymentRequired(url);
    expect(quoted.accepts).toEqual([offer(PRICES.cheapMinTotal.units)]);
    expect(quoted.resource.description).toBe(`${QUERY_DESCRIPTION} - 5 rows`);

    const payer = await newPayer(devnet, FUNDS);
    const response = await payer.fetch(url);
    expect((await arrowResult(response)).rows).toEqual(sandbox.sqliteRows(sql));
    expect(await devnet.balanceOf(payer.address)).toBe(FUNDS - PRICES.cheapMinTotal.units);
    expect(server.ledgerRows().at(-1)).toMatchObject({ table_name: "cheap_items", rows: 5, amount: PRICES.cheapMinTotal.units.toString() });
  });

  test("an empty result on a table without a metadata price is 200 without payment: a valid Arrow stream with the schema and zero rows", async () => {
    const tag = { type: "per_row", pay_to: sandbox.devnet.payTo, token: "usdc/devnet", amount_per_item: PRICES.perItem.config };
    const plain = await sandbox.serve({ tables: [{ name: "items", description: "Paid per row, no metadata price", price_tags: [tag] }] });
    try {
      const response = await fetch(queryUrl(plain.url, "SELECT id, name, price FROM items WHERE id < 0"));
      expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
      const { table, rows } = await arrowResult(response);
      expect(rows).toEqual([]);
      expect(table.schema.fields.map((field) => `${field.name}:${field.type}`)).toEqual(["id:Int64", "name:Utf8", "price:Float64"]);
      expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    } finally {
      await plain.stop();
    }
  });

  test("an empty result on a table whose metadata is sold costs the metadata price: its schema is not free", async () => {
    for (const sql of ["SELECT * FROM items LIMIT 0", "SELECT * FROM items WHERE id < 0"]) {
      const url = queryUrl(server.url, sql);
      const quoted = await paymentRequired(url);
      expect(quoted.accepts).toEqual([offer(PRICES.metadata.units)]);
      expect(quoted.resource.description).toBe(`${QUERY_DESCRIPTION} - 0 rows`);
    }
    const url = queryUrl(server.url, "SELECT * FROM items LIMIT 0");
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { table, rows } = await arrowResult(await payer.fetch(url));
    expect(rows).toEqual([]);
    expect(table.schema.fields.length).toBeGreaterThan(0);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICES.metadata.units);
  });
});

describe("fixed price", () => {
  test("a flat-priced query: 402 at the fixed amount without counting, paid, 200 Arrow, exact balances", async () => {
    const { devnet } = sandbox;
    const sql = "SELECT id, name, category FROM flat_items WHERE category = 'a' ORDER BY id DESC LIMIT 100";
    const url = queryUrl(server.url, sql);
    const quoted = await paymentRequired(url);
    expect(quoted.accepts).toEqual([offer(PRICES.flat.units)]);
    // Nothing was counted, so no row count is announced.
    expect(quoted.resource).toEqual({ url, description: QUERY_DESCRIPTION, mimeType: ARROW_STREAM });

    const payer = await newPayer(devnet, FUNDS);
    const payToBefore = await devnet.balanceOf(devnet.payTo);
    const response = await payer.fetch(url);
    const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
    const expected = sandbox.sqliteRows(sql);
    expect((await arrowResult(response)).rows).toEqual(expected);
    expect(receipt).toMatchObject({ success: true, payer: payer.address });
    expect(await devnet.balanceOf(payer.address)).toBe(FUNDS - PRICES.flat.units);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + PRICES.flat.units);
    expect(server.ledgerRows().at(-1)).toMatchObject({
      table_name: "flat_items",
      query: sql,
      rows: expected.length,
      amount: PRICES.flat.units.toString(),
      tx_hash: receipt.transaction,
    });
  });

  test("metadata_price on GET /api/table/{name}: 402 for JSON at the metadata URL, paid, 200 JSON", async () => {
    const { devnet } = sandbox;
    const url = `${server.url}/api/table/items`;
    const quoted = await paymentRequired(url);
    expect(quoted.resource).toEqual({ url, description: expect.any(String), mimeType: "application/json" });
    expect(quoted.accepts).toEqual([offer(PRICES.metadata.units)]);

    const payer = await newPayer(devnet, FUNDS);
    const payToBefore = await devnet.balanceOf(devnet.payTo);
    const response = await payer.fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
    const document = await response.json();
    expect(document).toMatchObject({ table_name: "items", requires_payment: true });
    expect(document.schema.fields.map((field: { name: string }) => field.name)).toEqual(["id", "name", "price", "category"]);
    expect(await devnet.balanceOf(payer.address)).toBe(FUNDS - PRICES.metadata.units);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + PRICES.metadata.units);
    expect(server.ledgerRows().at(-1)).toMatchObject({
      table_name: "items",
      resource_url: url,
      query: null,
      rows: null,
      amount: PRICES.metadata.units.toString(),
      tx_hash: receipt.transaction,
    });

    // A table without a metadata price describes itself for free.
    const free = await fetch(`${server.url}/api/table/flat_items`);
    expect(free.status).toBe(200);
    expect((await free.json()).table_name).toBe("flat_items");
  });
});
