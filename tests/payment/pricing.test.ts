import { describe, expect, test } from "bun:test";
import type { PriceTag } from "../../src/config/types.ts";
import { BadRequestError } from "../../src/errors.ts";
import { findOffer, offersForMetadata, offersForQuery, paymentRequiredBody } from "../../src/payment/pricing.ts";
import { EIGHTEEN, OTHER_PAY_TO, PAY_TO, USDC_BASE_SEPOLIA, fixed, metadata, perRow } from "./fixtures.ts";

const opts = { maxTimeoutSeconds: 300 };
const amounts = (tags: PriceTag[], rows: number | null) => offersForQuery(tags, { counted: rows, limit: null }, opts).map((o) => o.requirement.amount);

describe("per_row tiers", () => {
  const standard = perRow(2000n, { isDefault: true });
  const bulk = perRow(1000n, { minItems: 100 });
  const small = perRow(3000n, { maxItems: 10 });
  const medium = perRow(2500n, { minItems: 11, maxItems: 99 });

  test.each([
    ["below the bulk minimum", [standard, bulk], 99, ["198000"]],
    ["at the bulk minimum (inclusive)", [standard, bulk], 100, ["100000", "200000"]],
    ["above the bulk minimum", [standard, bulk], 250, ["250000", "500000"]],
    ["at a maximum (inclusive)", [small, medium], 10, ["30000"]],
    ["just past a maximum", [small, medium], 11, ["27500"]],
    ["at the upper bound of a closed tier", [small, medium], 99, ["247500"]],
  ] as const)("%s", (_name, tags, rows, expected) => {
    expect(amounts([...tags], rows)).toEqual([...expected]);
  });

  test("the row count outside every tier and no fixed tag is a 400 naming the tiers' bounds", () => {
    const call = () => offersForQuery([small, medium], { counted: 100, limit: null }, opts);
    expect(call).toThrow(BadRequestError);
    expect(call).toThrow(/100 rows.*at most 10 rows.*11 to 99 rows/);
  });

  test("outside every tier with a fixed tag: only the fixed offer", () => {
    expect(amounts([small, fixed(70000n)], 11)).toEqual(["70000"]);
  });

  test("not counted (null): only fixed offers, per_row tags are ignored", () => {
    expect(amounts([standard, fixed(5000n), bulk], null)).toEqual(["5000"]);
    expect(amounts([standard, bulk], null)).toEqual([]);
  });
});

describe("min_total_amount", () => {
  test.each([
    [0, "5000"],
    [1, "5000"],
    [500, "5000"],
    [501, "5010"],
    [10_000, "100000"],
  ])("%i rows at 10 per row, minimum 5000 → %s", (rows, expected) => {
    expect(amounts([perRow(10n, { minTotalAmount: 5000n })], rows)).toEqual([expected]);
  });
});

describe("zero rule: the cheapest offer at 0 means served free, never quoted at 0", () => {
  test.each([
    ["empty result, no minimum", [perRow(2000n)], 0],
    ["a free tier beside a paid fixed tag", [perRow(0n), fixed(5000n)], 40],
    ["a fixed tag at 0", [fixed(0n), perRow(5n)], 40],
    ["a fixed tag at 0, not counted", [fixed(0n)], null],
    ["no tags at all", [], 12],
  ] as const)("%s", (_name, tags, rows) => {
    expect(offersForQuery([...tags], { counted: rows, limit: null }, opts)).toEqual([]);
  });

  test("an empty result with a minimum is not free", () => {
    expect(amounts([perRow(2000n, { minTotalAmount: 1n })], 0)).toEqual(["1"]);
  });

  test("metadata at 0 is free; metadata ignores query tags", () => {
    expect(offersForMetadata([metadata(0n)], opts)).toEqual([]);
    expect(offersForMetadata([perRow(1n), fixed(2n)], opts)).toEqual([]);
    expect(offersForMetadata([metadata(10000n), perRow(1n)], opts).map((o) => o.requirement.amount)).toEqual(["10000"]);
  });
});

describe("ordering", () => {
  test("cheapest total first across kinds", () => {
    expect(amounts([fixed(90000n), perRow(1000n), perRow(800n, { minItems: 50 }), fixed(30000n)], 60)).toEqual([
      "30000",
      "48000",
      "60000",
      "90000",
    ]);
  });

  test.each([
    [[PAY_TO, OTHER_PAY_TO]],
    [[OTHER_PAY_TO, PAY_TO]],
  ] as const)("ties keep config order %#", (order) => {
    const tags = [fixed(7000n, { payTo: order[0] }), perRow(100n, { payTo: order[1] })];
    expect(offersForQuery(tags, { counted: 70, limit: null }, opts).map((o) => o.requirement.payTo)).toEqual([...order]);
  });

  test("tokens with different decimals are compared by value, not by raw units", () => {
    const oneDai = fixed(10n ** 18n, { token: EIGHTEEN });
    const twoUsdc = fixed(2_000_000n);
    const halfUsdc = fixed(500_000n);
    const offers = offersForQuery([twoUsdc, oneDai, halfUsdc], { counted: null, limit: null }, opts);
    expect(offers.map((o) => o.requirement.amount)).toEqual(["500000", (10n ** 18n).toString(), "2000000"]);
  });
});

describe("exact amounts", () => {
  test("bigint products beyond 2^53 stay exact", () => {
    const price = 123_456_789_012_345_678_901n;
    const rows = 987_654_321;
    // 123456789012345678901 × 987654321, computed outside JavaScript.
    expect(amounts([perRow(price)], rows)).toEqual(["121932631124828532112251181221"]);
  });
});

describe("requirements", () => {
  const lower = perRow(4n, { payTo: "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd" });

  test("keys in a fixed order, addresses checksummed, amount an integer string", () => {
    const [offer] = offersForQuery([lower], { counted: 1000, limit: null }, { maxTimeoutSeconds: 60 });
    const expected = {
      scheme: "exact",
      network: USDC_BASE_SEPOLIA.network,
      amount: "4000",
      asset: USDC_BASE_SEPOLIA.address,
      payTo: "0xABcdEFABcdEFabcdEfAbCdefabcdeFABcDEFabCD",
      maxTimeoutSeconds: 60,
      extra: { name: USDC_BASE_SEPOLIA.name, version: USDC_BASE_SEPOLIA.version },
    };
    expect(JSON.stringify(offer?.requirement)).toBe(JSON.stringify(expected));
    expect(JSON.stringify(offersForQuery([lower], { counted: 1000, limit: null }, { maxTimeoutSeconds: 60 })[0]?.requirement)).toBe(
      JSON.stringify(offer?.requirement),
    );
  });

  test("findOffer matches by structural equality of every field", () => {
    const offers = offersForQuery([perRow(2000n), fixed(10000n)], { counted: 3, limit: null }, opts);
    const [first, second] = offers;
    const reordered = JSON.parse(JSON.stringify(second?.requirement, Object.keys(second?.requirement ?? {}).reverse()));
    expect(findOffer(offers, JSON.parse(JSON.stringify(first?.requirement)))).toBe(first);
    expect(findOffer(offers, { ...reordered, extra: { ...second?.requirement.extra } })).toBe(second);

    const base = first?.requirement ?? {};
    for (const changed of [
      { ...base, amount: "6001" },
      { ...base, maxTimeoutSeconds: "300" },
      { ...base, payTo: OTHER_PAY_TO },
      { ...base, asset: USDC_BASE_SEPOLIA.address.toLowerCase() },
      { ...base, extra: { name: USDC_BASE_SEPOLIA.name, version: "1" } },
      { ...base, extra: { name: USDC_BASE_SEPOLIA.name, version: USDC_BASE_SEPOLIA.version, more: 1 } },
      { ...base, unexpected: true },
      { ...base, scheme: "upto" },
    ]) {
      expect(findOffer(offers, changed)).toBeUndefined();
    }
  });
});

describe("402 body", () => {
  const resource = { url: "http://localhost:4021/api/query?query=x", description: "DEX swaps", mimeType: "application/vnd.apache.arrow.stream" };

  test("per_row offers: description ends with the row count", () => {
    const offers = offersForQuery([fixed(900000n), perRow(2000n)], { counted: 42, limit: null }, opts);
    const body = paymentRequiredBody(resource, offers, "Payment required.");
    expect(body).toEqual({
      x402Version: 2,
      error: "Payment required.",
      resource: { ...resource, description: "DEX swaps - 42 rows" },
      accepts: offers.map((o) => o.requirement),
    });
    expect(body.accepts.map((a) => a.amount)).toEqual(["84000", "900000"]);
  });

  test("fixed and metadata offers: description unchanged", () => {
    expect(paymentRequiredBody(resource, offersForQuery([fixed(5n)], { counted: null, limit: null }, opts), "e").resource.description).toBe("DEX swaps");
    expect(paymentRequiredBody(resource, offersForMetadata([metadata(5n)], opts), "e").resource.description).toBe("DEX swaps");
  });
});

describe("per_row quoted by LIMIT (quote: limit, DESIGN.md §17)", () => {
  const byLimit = perRow(2000n, { quote: "limit", isDefault: true });
  const size = (counted: number | null, limit: number | null) => ({ counted, limit });

  test.each([
    ["LIMIT 10, nothing counted", [byLimit], size(null, 10), [{ amount: "20000", rows: null, upTo: 10 }]],
    ["LIMIT 10, a count of 3 does not change it", [byLimit], size(3, 10), [{ amount: "20000", rows: null, upTo: 10 }]],
    ["a minimum total raises it", [perRow(2000n, { quote: "limit", minTotalAmount: 50_000n })], size(null, 10), [{ amount: "50000", rows: null, upTo: 10 }]],
    ["beside a fixed tag", [fixed(30_000n), byLimit], size(null, 20), [{ amount: "30000", rows: null }, { amount: "40000", rows: null, upTo: 20 }]],
  ] as const)("%s", (_name, tags, querySize, expected) => {
    const offers = offersForQuery([...tags], querySize, opts);
    expect(offers.map((o) => ({ amount: o.requirement.amount, rows: o.rows, ...(o.upTo === undefined ? {} : { upTo: o.upTo }) }))).toEqual(expected.map((e) => ({ ...e })));
  });

  test("LIMIT 0 is free, and on a table that sells its schema costs the metadata price", () => {
    expect(offersForQuery([byLimit], size(null, 0), opts)).toEqual([]);
    expect(offersForQuery([byLimit, metadata(7n)], size(null, 0), opts).map((o) => o.requirement.amount)).toEqual(["7"]);
  });

  test.each([
    ["no LIMIT", [byLimit], size(null, null), /priced per row by the query's LIMIT.*add LIMIT n/],
    ["a LIMIT outside every tier", [perRow(2000n, { quote: "limit", maxItems: 50 })], size(null, 60), /The query's LIMIT is 60.*at most 50 rows/],
  ] as const)("%s is a 400 before anything is read", (_name, tags, querySize, message) => {
    const call = () => offersForQuery([...tags], querySize, opts);
    expect(call).toThrow(BadRequestError);
    expect(call).toThrow(message);
  });

  test("beside a tag quoted by count, nothing is refused before the count", () => {
    expect(offersForQuery([perRow(1000n), byLimit], size(null, null), opts)).toEqual([]);
  });

  test("the 402's description says up to N rows", () => {
    const resource = { url: "http://localhost/api/query?query=x", description: "Trades", mimeType: "application/vnd.apache.arrow.stream" };
    expect(paymentRequiredBody(resource, offersForQuery([byLimit], size(null, 25), opts), "e").resource.description).toBe("Trades - up to 25 rows");
  });
});
