/**
 * The x402 extensions of every 402 (src/payment/extensions.ts), checked with x402's own code: the
 * facilitator-side bazaar validators (@x402/extensions, Ajv against the declared JSON Schema, and
 * the spec's structural rules) and the client-side payment-identifier helpers.
 */
import { describe, expect, test } from "bun:test";
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, type DiscoveryExtension } from "@x402/extensions/bazaar";
import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  isPaymentIdentifierExtension,
  validatePaymentIdentifier,
} from "@x402/extensions/payment-identifier";
import { metadataExtensions, queryExtensions, type QueryDescription } from "../../src/payment/extensions.ts";
import { PAYMENT_IDENTIFIER, paymentIdOf } from "../../src/payment/payload.ts";

const ARROW = "application/vnd.apache.arrow.stream";
const fields = [
  { name: "id", data_type: "Int64", nullable: false },
  { name: "at", data_type: "Timestamp<MILLISECOND, UTC>", nullable: true },
];
const described = (overrides: Partial<QueryDescription> = {}): QueryDescription => ({
  sql: "SELECT id, at FROM swaps WHERE id > 10",
  maxQueryBytes: 16384,
  formatName: "arrow",
  mediaType: ARROW,
  fields,
  ...overrides,
});

describe("bazaar", () => {
  test.each([
    ["a query with its result's schema", queryExtensions(described())],
    ["a query on a table whose schema is sold", queryExtensions(described({ fields: null }))],
    ["a query with quotes, newlines and non-ASCII text", queryExtensions(described({ sql: `SELECT * FROM "t" WHERE s = 'é\n"x"'` }))],
    ["the metadata endpoint", metadataExtensions()],
  ])("%s: info validates against its schema and the spec's rules", (_, extensions) => {
    const bazaar = extensions.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(extensions.bazaar as Record<string, unknown>)).toEqual({ valid: true });
  });

  test("a query is an HTTP GET whose query parameter is its SQL; the output is the Arrow stream with its schema as the example", () => {
    const { info } = queryExtensions(described()).bazaar as { info: any };
    expect(info).toEqual({
      input: { type: "http", method: "GET", queryParams: { query: "SELECT id, at FROM swaps WHERE id > 10" } },
      output: { type: "arrow", format: ARROW, example: { schema: { fields } } },
    });
  });

  test("the schema refuses what the endpoint refuses: another method, no query, an unknown parameter", () => {
    const bazaar = queryExtensions(described()).bazaar as DiscoveryExtension & { info: any };
    const withInput = (input: object) => ({ ...bazaar, info: { ...bazaar.info, input } });
    expect(validateDiscoveryExtension(withInput({ type: "http", method: "DELETE", queryParams: { query: "x" } })).valid).toBe(false);
    expect(validateDiscoveryExtension(withInput({ type: "http", method: "GET", queryParams: {} })).valid).toBe(false);
    expect(validateDiscoveryExtension(withInput({ type: "http", method: "GET", queryParams: { query: "x", limit: "5" } })).valid).toBe(false);
  });

  test("where the schema is sold, the extension carries no example of it", () => {
    const text = JSON.stringify(queryExtensions(described({ sql: "SELECT * FROM swaps", fields: null })));
    for (const field of fields) expect(text).not.toContain(field.data_type);
    expect(text).not.toContain('"example"');
  });
});

describe("payment-identifier", () => {
  test("declared optional, exactly as x402's declarePaymentIdentifierExtension(false)", () => {
    for (const extensions of [queryExtensions(described()), metadataExtensions()]) {
      expect(extensions[PAYMENT_IDENTIFIER]).toEqual(declarePaymentIdentifierExtension(false));
      expect(isPaymentIdentifierExtension(extensions[PAYMENT_IDENTIFIER])).toBe(true);
    }
  });

  test("the id x402's client appends is the id the server reads", () => {
    const echoed = appendPaymentIdentifierToExtensions(structuredClone(queryExtensions(described())));
    const id = (echoed[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id;
    expect(validatePaymentIdentifier(echoed[PAYMENT_IDENTIFIER])).toEqual({ valid: true });
    expect(paymentIdOf({ extensions: echoed })).toBe(id);
  });
});
