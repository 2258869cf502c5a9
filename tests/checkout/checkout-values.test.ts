/**
 * The checkout's pure parts (ARCHITECTURE.md §15): amounts in token units, the rows a quote is for,
 * downloaded file names, the typed data handed to the wallet (checked against viem's own
 * serialisation, which wallets accept), which `Accept` headers get the paywall page, and the setup
 * the server writes (tokens, explorers, formats).
 */
import { describe, expect, test } from "bun:test";
import { getTypesForEIP712Domain, serializeTypedData, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { fileNameFor } from "../../src/checkout/browser/download.ts";
import { rowsOf, stillOffered, tokenUnits } from "../../src/checkout/browser/offers.ts";
import { typedDataJson } from "../../src/checkout/browser/typed-data.ts";
import { prefersHtml } from "../../src/routes/paywall.ts";
import { checkoutTokens, queryCheckout, tableCheckout } from "../../src/checkout/setup.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { tempDir } from "../support/fixtures.ts";

describe("amounts in token units", () => {
  test.each([
    ["40000", 6, "0.04"],
    ["1000000", 6, "1"],
    ["1", 6, "0.000001"],
    ["123456789", 6, "123.456789"],
    ["0", 6, "0"],
    ["1000000000000000000", 18, "1"],
    ["115792089237316195423570985008687907853269984665640564039457584007913129639935", 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"],
    ["5", 0, "5"],
  ])("%s smallest units with %i decimals read %s", (amount, decimals, text) => {
    expect(tokenUnits(amount, decimals)).toBe(text);
  });
});

describe("the rows a quote is for", () => {
  test.each([
    ["Query execution payment - 40 rows", "40 rows"],
    ["Query execution payment - 1 rows", "1 row"],
    ["Query execution payment - 1234567 rows", "1,234,567 rows"],
    ["Query execution payment - up to 100 rows", "up to 100 rows"],
    ["Any query, flat", null],
    [undefined, null],
  ])("%p → %p", (description, rows) => {
    expect(rowsOf(description)).toBe(rows);
  });
});

describe("file names", () => {
  test.each([
    ["trades", "SELECT * FROM trades LIMIT 100", "arrow", "", "trades.arrow"],
    ["trades", "select id from kinds where id > 1", "csv", "", "kinds.csv"],
    ["trades", 'SELECT * FROM "odd<table>"', "parquet", "", "odd_table.parquet"],
    ["trades", "SELECT 1", "json", "", "trades.json"],
    ["trade_book", "", "json", "-table", "trade_book-table.json"],
    ["../../etc", "", "ndjson", "", "etc.ndjson"],
    ["", "", "arrow", "", "result.arrow"],
  ])("table %p, SQL %p, %s → %s", (table, sql, extension, suffix, name) => {
    expect(fileNameFor(table, sql, extension, suffix)).toBe(name);
  });
});

describe("the typed data the wallet signs", () => {
  const typed = {
    domain: { name: "USD Coin", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Hex },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "TransferWithAuthorization",
    message: {
      from: "0x2e57df3b95c0ab59ae2b87056e1d23797dc19ff4",
      to: "0x467803074567c3eA074c0691d20b0b185F39a5Ff",
      value: 40_000n,
      validAfter: 0n,
      validBefore: 1_800_000_000n,
      nonce: `0x${"ab".repeat(32)}`,
    },
  } as const;

  // viem writes addresses in lower case; EIP-712 encodes an address the same in either case.
  const addressesLowered = (json: string) => JSON.parse(json, (_key, value) => (typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value) ? value.toLowerCase() : value));

  test("is what viem's wallet client sends as eth_signTypedData_v4: EIP712Domain declared, integers as decimal strings", () => {
    const withDomain = { ...typed, types: { EIP712Domain: getTypesForEIP712Domain({ domain: typed.domain }), ...typed.types } };
    const viem = serializeTypedData(withDomain as Parameters<typeof serializeTypedData>[0]);
    expect(addressesLowered(typedDataJson(typed))).toEqual(addressesLowered(viem));
  });

  test("a domain without a field leaves it out of EIP712Domain", () => {
    const { version: _version, ...domain } = typed.domain;
    expect(JSON.parse(typedDataJson({ ...typed, domain })).types.EIP712Domain.map((f: { name: string }) => f.name)).toEqual(["name", "chainId", "verifyingContract"]);
  });

  test("signed from the JSON, it is the signature of the original typed data", async () => {
    const account = privateKeyToAccount(`0x${"11".repeat(32)}`);
    const parsed = JSON.parse(typedDataJson(typed));
    const { EIP712Domain: _domain, ...types } = parsed.types;
    const message = { ...parsed.message, value: BigInt(parsed.message.value), validAfter: BigInt(parsed.message.validAfter), validBefore: BigInt(parsed.message.validBefore) };
    expect(await account.signTypedData({ domain: parsed.domain, types, primaryType: parsed.primaryType, message })).toBe(await account.signTypedData(typed));
  });
});

test("an offer is still offered only when the new 402 has it exactly", () => {
  const offer = { scheme: "exact", network: "eip155:31337", amount: "40000", asset: "0xA", payTo: "0xB", maxTimeoutSeconds: 300, extra: { name: "T", version: "2" } };
  const required = (accepts: unknown[]) => ({ x402Version: 2, resource: { url: "u", description: "d", mimeType: "m" }, accepts }) as never;
  expect(stillOffered(required([offer]), offer as never)).toBe(true);
  expect(stillOffered(required([{ ...offer, amount: "41000" }]), offer as never)).toBe(false);
  expect(stillOffered(required([]), offer as never)).toBe(false);
});

describe("the paywall page answers a browser's navigation, the JSON 402 everything else", () => {
  test.each([
    ["text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7", true],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true],
    ["text/html", true],
    ["TEXT/HTML; charset=utf-8, */*;q=0.1", true],
    [null, false],
    ["", false],
    ["*/*", false],
    ["application/json", false],
    ["application/vnd.apache.arrow.stream", false],
    ["application/json, text/html", false],
    ["text/html, application/json", false],
    ["*/*, text/html;q=0.9", false],
    ["text/html;q=0", false],
    ["text/*", false],
    ["application/json;q=0.5, text/html", true],
  ])("Accept %p → %p", (accept, html) => {
    expect(prefersHtml(accept)).toBe(html);
  });
});

describe("the checkout's setup", () => {
  const config = resolveConfig(
    {
      database: { sqlite: "data.sqlite" },
      tokens: { "usdc/devnet": { chain: "31337", address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", name: "Test USD Coin", version: "2", decimals: 6, symbol: "tUSDC", network_label: "devnet" } },
      tables: [{ name: "t", description: "T" }],
    },
    { baseDir: tempDir(), env: {} },
  );

  test("names each token's network as the config does, with its decimals; only the built-in networks have an explorer", () => {
    const tokens = checkoutTokens(config);
    expect(tokens.find((t) => t.network === "eip155:8453")).toEqual({
      network: "eip155:8453",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      symbol: "USDC",
      decimals: 6,
      networkLabel: "Base",
      explorerTx: "https://basescan.org/tx/",
    });
    expect(tokens.find((t) => t.network === "eip155:84532")?.explorerTx).toBe("https://sepolia.basescan.org/tx/");
    expect(tokens.find((t) => t.network === "eip155:31337")).toEqual({ network: "eip155:31337", asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3", symbol: "tUSDC", decimals: 6, networkLabel: "devnet" });
    // Every built-in token has its explorer.
    expect(tokens.filter((t) => t.explorerTx === undefined).map((t) => t.networkLabel)).toEqual(["devnet"]);
  });

  test("a query's checkout offers every format, Arrow first; a table's, its JSON description", () => {
    expect(queryCheckout(config, "t", "SELECT * FROM t").formats.map((f) => [f.name, f.extension])).toEqual([
      ["arrow", "arrow"],
      ["csv", "csv"],
      ["json", "json"],
      ["ndjson", "ndjson"],
      ["parquet", "parquet"],
    ]);
    expect(tableCheckout(config, "odd<table>")).toMatchObject({ kind: "table", path: "/api/table/odd%3Ctable%3E", format: "json", formats: [{ name: "json" }] });
  });
});
