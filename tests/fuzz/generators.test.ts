/**
 * The fuzzer's own guarantees: a seed always gives the same requests (so a failure replays), other
 * seeds give others, and a printed request reads back as exactly the request that was sent.
 */
import { describe, expect, test } from "bun:test";
import { httpRequest, queryTarget } from "./http-gen.ts";
import { mcpMessage } from "./mcp-gen.ts";
import { literal, serialize, type FuzzRequest } from "./raw-http.ts";
import { fuzzSettings, Random } from "./random.ts";
import { journalQuery, offsetProbe, probe } from "./sealed-gen.ts";
import { sqlText, type FuzzCatalog } from "./sql-gen.ts";

const CATALOG: FuzzCatalog = {
  tables: [
    { name: "kinds", columns: ["id", "label", "day"], paid: false },
    { name: "items", columns: ["id", "name", "price"], paid: true },
  ],
};

/** The requests of cases 0..n-1 of a file under `seed`, as the runner derives them. */
function requests(seed: number, n = 200): FuzzRequest[] {
  return Array.from({ length: n }, (_, index) => {
    const rng = Random.derive(seed, `gen#${index}`);
    const sql = sqlText(rng, CATALOG).sql;
    const mcp = mcpMessage(rng, () => sqlText(rng, CATALOG).sql, ["kinds", "items"]);
    const raw = httpRequest(rng, "127.0.0.1:4021", ["dex"], ["kinds", "items"], () => sqlText(rng, CATALOG).sql);
    return { ...raw, headers: [...raw.headers, ["X-Sql", queryTarget(rng, sql)], ["X-Mcp", mcp.body.slice(0, 1000)]] };
  });
}

describe("seeds", () => {
  test("the same seed gives the same requests, byte for byte", () => {
    const a = requests(402).map((request) => serialize(request, "h").toString("base64"));
    const b = requests(402).map((request) => serialize(request, "h").toString("base64"));
    expect(a).toEqual(b);
  });

  test("another seed gives other requests", () => {
    const a = requests(402).map((request) => serialize(request, "h").toString("base64"));
    const b = requests(403).map((request) => serialize(request, "h").toString("base64"));
    expect(a.filter((request, i) => request === b[i]).length).toBeLessThan(a.length / 10);
  });

  test("ARROW402_FUZZ_SEED and ARROW402_FUZZ_REQUESTS choose the run; anything but a whole number is refused", () => {
    expect(fuzzSettings({})).toEqual({ seed: 402, requests: 3000 });
    expect(fuzzSettings({ ARROW402_FUZZ_SEED: "7", ARROW402_FUZZ_REQUESTS: "20000" })).toEqual({ seed: 7, requests: 20000 });
    expect(() => fuzzSettings({ ARROW402_FUZZ_SEED: "x" })).toThrow("ARROW402_FUZZ_SEED must be a non-negative integer");
    expect(() => fuzzSettings({ ARROW402_FUZZ_REQUESTS: "1.5" })).toThrow("ARROW402_FUZZ_REQUESTS");
  });
});

describe("oracle probes (sealed-gen.ts)", () => {
  /** The SQL texts of cases 0..n-1: both of each probe pair, both offsets, a journal read. */
  function texts(seed: number, n = 200): string[] {
    return Array.from({ length: n }, (_, index) => {
      const rng = Random.derive(seed, `oracles#${index}`);
      const pair = probe(rng, 20);
      const offsets = offsetProbe(rng, 20);
      return [...pair.rows.map((row) => pair.sql(row)), ...offsets.offsets.map((k) => offsets.sql(k)), journalQuery(rng, [1000, 1001, 1002], 20)];
    }).flat();
  }

  test("the same seed gives the same SQL", () => {
    expect(texts(402)).toEqual(texts(402));
    const other = texts(403);
    expect(texts(402).filter((sql, i) => sql === other[i]).length).toBeLessThan(200);
  });

  test("the two SQL of a pair differ only where they name the row, or the OFFSET", () => {
    for (let index = 0; index < 500; index++) {
      const rng = Random.derive(402, `pairs#${index}`);
      const pair = probe(rng, 20);
      const [a, b] = pair.rows.map((row) => pair.sql(row).replaceAll(pair.selector(row), "<row>"));
      expect(a).toBe(b!);
      expect(a).toContain("<row>");
      const offsets = offsetProbe(rng, 20);
      const [x, y] = offsets.offsets.map((k) => offsets.sql(k).replace(/OFFSET (0x)?[0-9a-f]+$|LIMIT (0x)?[0-9a-f]+,/, "<k>"));
      expect(x).toBe(y!);
    }
  });
});

describe("printed requests", () => {
  test.each([1, 2, 3, 4, 5, 6, 7, 8])("a printed text reads back as the same text (seed %p)", (seed) => {
    const rng = new Random(seed);
    for (let i = 0; i < 200; i++) {
      const text = rng.chance(0.2) ? "x".repeat(rng.int(20, 100)) + rng.unicode(5) + "\u0000".repeat(30) : rng.unicode(rng.size(80)) + "\ud800";
      expect(new Function(`return ${literal(text)}`)()).toBe(text);
    }
  });
});
