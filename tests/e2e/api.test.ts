/**
 * The foundation through a real listening server: discovery, table metadata, free queries as
 * Arrow, paid tables that never leak data, CORS (spec "Endpoints"; ARCHITECTURE.md §3, §6, §8).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, PAY_TO, tempDir, typesConfig } from "../support/fixtures.ts";

let server: RunningServer;
let dbPath: string;

beforeAll(async () => {
  const dir = tempDir();
  dbPath = join(dir, "types.sqlite");
  createTypesDatabase(dbPath);
  server = await startServer(typesConfig(dir, { server: { bind: "127.0.0.1:0", cors_origins: ["https://app.example"] } }));
});
afterAll(() => server.stop());

const get = (path: string, init?: RequestInit) => fetch(server.url + path, init);
const query = (sql: string, init?: RequestInit) => get(`/api/query?query=${encodeURIComponent(sql)}`, init);

describe("GET /api/", () => {
  test("is the discovery document", async () => {
    const res = await get("/api/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const doc = await res.json();
    expect(doc.server).toEqual({ url: server.url, version: expect.any(String), facilitator_url: "https://x402.org/facilitator" });
    expect(doc.endpoints["GET /api/query"].response_format).toBe("application/vnd.apache.arrow.stream");
    expect(doc.endpoints["GET /api/table/{name}"].response_format).toBe("application/json");
    expect(doc.endpoints["GET /api/"].description).toBeString();
    expect(doc.tables.map((t: { name: string }) => t.name)).toEqual(["kinds", "cheap_items", "items"]);
    const items = doc.tables[2];
    expect(items).toEqual({
      name: "items",
      description: "Paid items",
      requires_payment: true,
      details: "/api/table/items",
      // The metadata price tag is omitted from the summary on purpose (spec).
      pricing: [
        { model: "PerRow", amount_per_item: "1000", quote: "count", token_address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", chain: "84532", pay_to: PAY_TO },
      ],
    });
    expect(doc.tables[0]).toMatchObject({ requires_payment: false, pricing: [] });
  });
});

describe("GET /api/table/{name}", () => {
  test("describes the schema with the Arrow type each column is returned as", async () => {
    const res = await get("/api/table/kinds");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc).toMatchObject({ table_name: "kinds", price_tags: [], requires_payment: false, description: "One column per Arrow type" });
    const types = Object.fromEntries(doc.schema.fields.map((f: { name: string; data_type: string }) => [f.name, f.data_type]));
    expect(types).toEqual({
      id: "Int64", big: "Int64", label: "Utf8", note: "Utf8", data: "Binary", score: "Float64", ok: "Bool",
      day: "Date32<DAY>", at: "Timestamp<MILLISECOND, UTC>", stamp: "Timestamp<MILLISECOND, UTC>", anything: "Utf8",
    });
    expect(doc.schema.fields[1]).toEqual({ name: "big", data_type: "Int64", nullable: true, metadata: { sqlite_type: "INTEGER" } });
    expect(doc.schema.metadata).toEqual({});
  });

  test("is 404 JSON for an unknown table", async () => {
    const res = await get("/api/table/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual({ error: "Table 'nope' not found" });
  });

  test("answers 402 when the table has a metadata price", async () => {
    const res = await get("/api/table/items");
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body.resource).toEqual({ url: `${server.url}/api/table/items`, description: expect.any(String), mimeType: "application/json" });
    expect(body.accepts[0]).toMatchObject({ scheme: "exact", network: "eip155:84532", amount: "10000", payTo: PAY_TO });
    expect(JSON.parse(atob(res.headers.get("payment-required")!))).toEqual(body);
  });
});

describe("GET /api/query", () => {
  test("returns the rows of a free table as an Arrow stream equal to SQLite's", async () => {
    const res = await query("SELECT id, name, price FROM cheap_items WHERE price > 10 ORDER BY id DESC LIMIT 5");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.apache.arrow.stream");
    const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    const direct = new Database(dbPath, { readonly: true })
      .query("SELECT id, name, price FROM cheap_items WHERE price > 10 ORDER BY id DESC LIMIT 5")
      .all() as { id: number; name: string; price: number }[];
    expect(table.toArray().map((r) => ({ id: Number(r.id), name: r.name, price: r.price }))).toEqual(direct);
  });

  test("keeps every type: exact int64, nulls, dates, timestamps, blobs, booleans", async () => {
    const res = await query("SELECT * FROM kinds ORDER BY id");
    const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    expect(table.numRows).toBe(4);
    expect(table.getChild("big")!.toArray()).toEqual(new BigInt64Array([9007199254740993n, -9223372036854775808n, 0n, 9223372036854775807n]));
    expect(table.getChild("big")!.get(2)).toBeNull();
    expect(table.getChild("label")!.get(1)).toBe("béta ✓");
    expect(table.getChild("ok")!.get(0)).toBe(true);
    expect(table.getChild("day")!.get(0)).toBe(Date.UTC(2026, 0, 31));
    expect(table.getChild("at")!.get(1)).toBe(Date.UTC(2026, 0, 31, 12, 34, 56, 789));
    expect(table.getChild("stamp")!.get(0)).toBe(1767225600 * 1000);
    expect(table.getChild("stamp")!.get(1)).toBe(Date.UTC(2026, 0, 31, 22));
    expect([...table.getChild("data")!.get(0)]).toEqual([1, 2, 3]);
    expect(table.getChild("anything")!.get(1)).toBe("42");
  });

  test("an empty result is a valid stream with the schema and no rows", async () => {
    const res = await query("SELECT id, label FROM kinds WHERE id > 100");
    expect(res.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => [f.name, String(f.type)])).toEqual([["id", "Int64"], ["label", "Utf8"]]);
  });

  test("a paid table answers 402 with offers and never the data", async () => {
    const res = await query("SELECT * FROM items WHERE id <= 3");
    expect(res.status).toBe(402);
    const text = await res.text();
    expect(text).not.toContain("item-1");
    const body = JSON.parse(text);
    expect(body.x402Version).toBe(2);
    expect(body.resource.description).toEndWith(" - 3 rows");
    expect(body.accepts).toEqual([
      { scheme: "exact", network: "eip155:84532", amount: "3000", asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: "USDC", version: "2" } },
    ]);
  });

  test("a % and non-ASCII text sent percent-encoded reach SQLite as written (the malformed-escape check passes them)", async () => {
    const res = await query("SELECT id FROM kinds WHERE label LIKE 'b%✓' OR label LIKE '%amm%' ORDER BY id");
    expect(res.status).toBe(200);
    expect([...tableFromIPC(new Uint8Array(await res.arrayBuffer())).getChild("id")!].map(Number)).toEqual([2, 4]);
  });

  test("rejected SQL is a 400 naming the construct", async () => {
    const res = await query("SELECT id FROM kinds JOIN items");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(await res.text()).toContain("JOIN");
  });
});

describe("CORS", () => {
  test("exposes the payment headers to allowed origins", async () => {
    const res = await get("/api/", { headers: { origin: "https://app.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(res.headers.get("access-control-expose-headers")).toBe("PAYMENT-REQUIRED, PAYMENT-RESPONSE");
    const other = await get("/api/", { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  // Every kind of response a browser may need to read: data, quotes, errors, unknown paths.
  test.each([
    ["discovery", "/api/", 200],
    ["free Arrow result", `/api/query?query=${encodeURIComponent("SELECT id FROM kinds LIMIT 2")}`, 200],
    ["402 quote", `/api/query?query=${encodeURIComponent("SELECT id FROM items")}`, 402],
    ["rejected SQL", `/api/query?query=${encodeURIComponent("SELECT id FROM kinds JOIN items")}`, 400],
    ["unknown table", "/api/table/nope", 404],
    ["unknown path", "/nowhere", 404],
  ])("an allowed origin can read the %s response", async (_, path, status) => {
    const res = await get(path, { headers: { origin: "https://app.example" } });
    expect(res.status).toBe(status);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(res.headers.get("access-control-expose-headers")).toBe("PAYMENT-REQUIRED, PAYMENT-RESPONSE");
    expect(res.headers.get("vary")).toEndWith("Origin");
    const plain = await get(path);
    expect(plain.status).toBe(status);
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("preflight allows PAYMENT-SIGNATURE", async () => {
    const res = await get("/api/query", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-headers": "payment-signature" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-headers")).toContain("PAYMENT-SIGNATURE");
  });

  test("preflight allows every header @x402/fetch sends on its paid retry", async () => {
    // wrapFetchWithPayment adds PAYMENT-SIGNATURE and an Access-Control-Expose-Headers request
    // header; a browser refuses the retry unless the preflight allows both.
    const res = await get("/api/query", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "access-control-expose-headers,payment-signature",
      },
    });
    expect(res.status).toBe(204);
    const allowed = res.headers.get("access-control-allow-headers")!.split(",").map((h) => h.trim().toLowerCase());
    expect(allowed).toContain("payment-signature");
    expect(allowed).toContain("access-control-expose-headers");
  });
});
