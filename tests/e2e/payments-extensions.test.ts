/**
 * x402 extensions over HTTP through the real listening server (ARCHITECTURE.md §13): every 402 advertises
 * `bazaar` and `payment-identifier`; a payload that carries a payment id is idempotent by it (the
 * same id and payload served again without a charge, the same id with another payload 409).
 */
import { describe, expect, test } from "bun:test";
import { validateDiscoveryExtension, type DiscoveryExtension } from "@x402/extensions/bazaar";
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from "@x402/extensions/payment-identifier";
import type { PaymentPayload } from "@x402/core/types";
import { PRICES, type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl, type Payer } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const send = (url: string, payload: unknown) => fetch(url, { headers: { "PAYMENT-SIGNATURE": encodePayment(payload) } });

async function snapshot(payer: Payer) {
  const { devnet } = sandbox;
  return { payer: await devnet.balanceOf(payer.address), payTo: await devnet.balanceOf(devnet.payTo), ledger: server.ledgerRows().length };
}

describe("every 402 advertises bazaar and payment-identifier", () => {
  test.each([
    ["a per_row query", () => queryUrl(server.url, "SELECT id FROM items WHERE id < 4"), "arrow"],
    ["a fixed-price query", () => queryUrl(server.url, "SELECT id FROM flat_items WHERE id < 4 LIMIT 100"), "arrow"],
    ["the metadata endpoint", () => `${server.url}/api/table/items`, "json"],
  ])("%s", async (_, url, outputType) => {
    const { extensions } = (await paymentRequired(url())) as { extensions: Record<string, unknown> };
    expect(Object.keys(extensions)).toEqual(["bazaar", "payment-identifier"]);
    const bazaar = extensions.bazaar as DiscoveryExtension & { info: any };
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(bazaar.info.input.method).toBe("GET");
    expect(bazaar.info.output.type).toBe(outputType);
    expect(extensions["payment-identifier"]).toEqual(declarePaymentIdentifierExtension(false));
  });

  test("the bazaar example of a query is the Arrow schema of the result it sells", async () => {
    const url = queryUrl(server.url, "SELECT id AS item, price, category FROM flat_items WHERE id <= 3 LIMIT 100");
    const { extensions } = (await paymentRequired(url)) as { extensions: any };
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { table } = await arrowResult(await payer.fetch(url));
    const fields = table.schema.fields.map((field) => ({ name: field.name, data_type: String(field.type), nullable: field.nullable }));
    expect(extensions.bazaar.info.output.example).toEqual({ schema: { fields } });
  });
});

describe("payment-identifier", () => {
  test("the same id with the same payload is served again without a charge; with another payload it is 409, and nothing moves", async () => {
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const url = queryUrl(server.url, "SELECT id, name FROM items WHERE id BETWEEN 31 AND 36");
    const required = await paymentRequired(url);
    const id = `pay_${crypto.randomUUID().replaceAll("-", "")}`;
    const withId = (payload: PaymentPayload) => ({ ...payload, extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {}), id) });
    const price = 6n * PRICES.perItem.units;
    const start = await snapshot(payer);

    const first = withId(await payer.sign(required));
    const paid = await send(url, first);
    const receipt = decodeHeader(paid.headers.get("PAYMENT-RESPONSE"));
    const { rows } = await arrowResult(paid);
    expect(rows).toEqual(sandbox.sqliteRows("SELECT id, name FROM items WHERE id BETWEEN 31 AND 36"));
    const afterPayment = await snapshot(payer);
    expect(afterPayment).toEqual({ payer: start.payer - price, payTo: start.payTo + price, ledger: start.ledger + 1 });
    sandbox.resetProxy();

    const again = await send(url, first);
    expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toEqual(receipt);
    expect((await arrowResult(again)).rows).toEqual(rows);

    const conflict = await send(url, withId(await payer.sign(required)));
    expect(conflict.status).toBe(409);
    expect(conflict.headers.get("content-type")).toStartWith("text/plain");
    expect(await conflict.text()).toContain(`'${id}' was already used with another payment`);

    expect(sandbox.proxy.requests).toEqual([]);
    expect(await snapshot(payer)).toEqual(afterPayment);
  });
});
