/**
 * Every error path, walked through `app.handle()`: status, content type and body shape
 * (ARCHITECTURE.md §8). Text errors are one line that says what to change, never a stack trace;
 * 402s are x402 V2 bodies mirrored in PAYMENT-REQUIRED; 404s on the table endpoint are JSON.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { App } from "../src/app.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { authorizeTransfer } from "../devnet/authorize.ts";
import { buildApp, type BuiltApp } from "../src/server.ts";
import { PAY_TO, typesConfig, typesDatabaseWithBigTable } from "./support/fixtures.ts";

let built: BuiltApp;
let app: App;

beforeAll(async () => {
  const { dir, db } = typesDatabaseWithBigTable(300_000);
  db.run("CREATE TABLE broken (id INTEGER PRIMARY KEY, n INTEGER)");
  db.run("INSERT INTO broken VALUES (1, 10), (2, 'sk_live_do_not_leak')");
  db.close();
  mkdirSync(join(dir, "dashboards"));
  // A closed port: the facilitator cannot be reached (a real failure, not a stub).
  const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const facilitator = `http://127.0.0.1:${closed.port}`;
  await closed.stop(true);
  const config = typesConfig(dir, {
    server: { bind: "127.0.0.1:4021", base_url: "http://localhost:4021" },
    facilitator: { url: facilitator, timeout_ms: 2000 },
    limits: { max_rows: 1000, query_timeout_ms: 1000, max_query_bytes: 2000 },
    tables: [
      { name: "kinds", description: "free" },
      { name: "broken", description: "a bad value" },
      { name: "big", description: "slow" },
      {
        name: "items",
        description: "paid",
        price_tags: [
          { type: "fixed", pay_to: PAY_TO, token: "usdc/base_sepolia", amount: "0.5" },
          { type: "metadata_price", pay_to: PAY_TO, token: "usdc/base_sepolia", amount: "0.01" },
        ],
      },
    ],
    dashboards: { root: "dashboards", entries: [{ slug: "dex", title: "DEX", table: "kinds" }] },
  });
  built = await buildApp(config);
  app = built.app;
});
afterAll(() => built.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://localhost:4021${path}`, { headers }));
const q = (sql: string) => `/api/query?query=${encodeURIComponent(sql)}`;

/** An x402 V2 payload for `accepted`, signed for real by a fresh key (it passes the local checks). */
async function payment(accepted: any): Promise<string> {
  const [from, to, value, validAfter, validBefore, nonce, signature] = await authorizeTransfer(privateKeyToAccount(generatePrivateKey()), {
    token: { address: accepted.asset, name: accepted.extra.name, version: accepted.extra.version, chainId: Number(accepted.network.split(":")[1]) },
    to: accepted.payTo,
    value: BigInt(accepted.amount),
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 300),
  });
  const authorization = { from, to, value: String(value), validAfter: String(validAfter), validBefore: String(validBefore), nonce };
  const payload = {
    x402Version: 2,
    accepted,
    payload: { signature, authorization },
    // The resource the offers were quoted for (the only query these cases pay for).
    resource: { url: `http://localhost:4021${q("SELECT id FROM items LIMIT 100")}`, description: "", mimeType: "application/vnd.apache.arrow.stream" },
  };
  return btoa(JSON.stringify(payload));
}

async function fixedOffer(): Promise<unknown> {
  const res = await get(q("SELECT id FROM items LIMIT 100"));
  return (await res.json()).accepts[0];
}

type Shape = "text" | "x402" | "json-error" | "bare";

const cases: [string, () => Promise<Response>, number, Shape, string][] = [
  ["missing query", () => get("/api/query"), 400, "text", "Missing 'query' parameter"],
  ["empty query", () => get("/api/query?query="), 400, "text", "Missing 'query' parameter"],
  ["two query parameters", () => get("/api/query?query=a&query=b"), 400, "text", "exactly one"],
  ["a query that is not valid percent-encoding", () => get("/api/query?query=SELECT%20id%20FROM%20kinds%20WHERE%20label%20%3D%20'%ZZ'"), 400, "text", "not valid percent-encoding"],
  ["a query whose escapes are not UTF-8", () => get("/api/query?query=SELECT%20id%20FROM%20kinds%20WHERE%20label%20%3D%20'%E9'"), 400, "text", "not valid percent-encoding"],
  ["two format parameters", () => get(`${q("SELECT id FROM kinds")}&format=csv&format=json`), 400, "text", "at most one 'format'"],
  ["POST to the query endpoint", () => app.handle(new Request(`http://localhost:4021${q("SELECT id FROM kinds")}`, { method: "POST" })), 405, "text", "POST /api/query is not served: send a GET request"],
  ["DELETE of a table", () => app.handle(new Request("http://localhost:4021/api/table/kinds", { method: "DELETE" })), 405, "text", "send a GET request"],
  ["syntax error", () => get(q("SELEC id FROM kinds")), 400, "text", "syntax"],
  ["rejected construct", () => get(q("SELECT count(*) FROM kinds")), 400, "text", "count"],
  ["unknown table", () => get(q("SELECT * FROM nope")), 400, "text", "nope"],
  ["unknown column", () => get(q("SELECT nope FROM kinds")), 400, "text", "nope"],
  ["query too long", () => get(q(`SELECT id FROM kinds WHERE label = '${"x".repeat(2100)}'`)), 400, "text", "2000"],
  ["SQLite error caused by the query", () => get(q("SELECT id FROM kinds WHERE abs(-9223372036854775807 - 1) > 0")), 400, "text", "integer overflow"],
  ["row limit", () => get(q("SELECT id FROM big")), 400, "text", "more than the limit of 1000"],
  // A 10,000-byte string searched for a 1,600-byte one: 16 MB compared for every row, refused before it runs.
  [
    "a WHERE that compares long strings in every row",
    () => get(q(`SELECT id FROM kinds WHERE instr(replace(replace('x','x','${"x".repeat(100)}'),'x','${"x".repeat(100)}') || label, replace(replace('x','x','${"x".repeat(40)}'),'x','${"x".repeat(40)}')) > 0`)),
    400,
    "text",
    "for every row",
  ],
  // A long strftime() format rendered for every one of 300,000 rows: seconds of work, even on an idle machine.
  ["time limit", () => get(q(`SELECT id FROM big WHERE length(strftime('${"%Y-%m-%dT%H:%M:%f".repeat(100)}', id)) < 0`)), 400, "text", "1000 ms limit"],
  ["undecodable payment header (query)", () => get(q("SELECT id FROM items LIMIT 100"), { "payment-signature": "%%%" }), 400, "text", "PAYMENT-SIGNATURE"],
  // The SQL is validated before any payment logic: a bad query is named first.
  ["unknown column and an undecodable payment header", () => get(q("SELECT nope FROM items"), { "payment-signature": "%%%" }), 400, "text", "nope"],
  ["undecodable payment header (metadata)", () => get("/api/table/items", { "payment-signature": btoa("{not json") }), 400, "text", "PAYMENT-SIGNATURE"],
  ["malformed payment payload", () => get(q("SELECT id FROM items LIMIT 100"), { "payment-signature": btoa(JSON.stringify({ x402Version: 2 })) }), 400, "text", "PAYMENT-SIGNATURE"],
  ["a query of a table sold per query without a LIMIT", () => get(q("SELECT id FROM items")), 400, "text", "need a LIMIT of at most 1000"],
  ["a WHERE that can fail on a value, on a table sold per query", () => get(q("SELECT id FROM items WHERE abs(id) > 0 LIMIT 5")), 400, "text", "abs(CAST(id AS REAL))"],
  ["payment required (query)", () => get(q("SELECT id FROM items LIMIT 100")), 402, "x402", "Payment required"],
  ["payment required (metadata)", () => get("/api/table/items"), 402, "x402", "Payment required"],
  ["payment matching no offer", async () => get(q("SELECT id FROM items LIMIT 100"), { "payment-signature": await payment({ scheme: "exact", network: "eip155:84532", amount: "1", asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: "USDC", version: "2" } }) }), 402, "x402", ""],
  ["unknown table metadata", () => get("/api/table/nope"), 404, "json-error", "Table 'nope' not found"],
  ["table name that is not valid percent-encoding", () => get("/api/table/%ZZ"), 400, "text", "percent-encoding"],
  ["unknown path", () => get("/nope/deeper"), 404, "bare", ""],
  ["value that does not fit", () => get(q("SELECT * FROM broken")), 500, "text", "column 'n', rowid 2"],
  ["value that does not fit (small read)", () => get(q("SELECT * FROM broken LIMIT 5")), 500, "text", "column 'n', rowid 2"],
  ["facilitator unreachable", async () => get(q("SELECT id FROM items LIMIT 100"), { "payment-signature": await payment(await fixedOffer()) }), 500, "text", "facilitator"],
  ["dashboards not generated", () => get("/"), 503, "text", "arrow402 dashboards"],
  ["dashboard folder before generation", () => get("/dex/"), 503, "text", "arrow402 dashboards"],
];

test.each(cases)("%s", async (_name, request, status, shape, mention) => {
  const res = await request();
  expect(res.status).toBe(status);
  if (status === 405) expect(res.headers.get("allow")).toBe("GET, HEAD");
  const type = res.headers.get("content-type") ?? "";
  const body = await res.text();
  if (shape === "text") {
    expect(type).toStartWith("text/plain");
    expect(body.trim().split("\n")).toHaveLength(1);
    expect(body).not.toMatch(/\bat .+:\d+:\d+/); // no stack trace
    expect(body.toLowerCase()).toContain(mention.toLowerCase());
  } else if (shape === "x402") {
    expect(type).toStartWith("application/json");
    const json = JSON.parse(body);
    expect(json.x402Version).toBe(2);
    expect(json.error).toBeString();
    expect(json.error).toContain(mention);
    expect(json.resource.url).toStartWith("http://localhost:4021/api/");
    expect(json.resource.mimeType).toBeString();
    expect(json.accepts.length).toBeGreaterThan(0);
    expect(JSON.parse(atob(res.headers.get("payment-required")!))).toEqual(json);
  } else if (shape === "json-error") {
    expect(type).toStartWith("application/json");
    expect(JSON.parse(body)).toEqual({ error: mention });
  } else {
    expect(body).toBe("Not found");
  }
});

test("a value that does not fit is named by table, column and rowid: the value itself stays in the server's log", async () => {
  const logged: string[] = [];
  const original = console.error;
  console.error = (...parts: unknown[]) => void logged.push(parts.join(" "));
  try {
    for (const sql of ["SELECT * FROM broken", "SELECT * FROM broken LIMIT 5", "SELECT * FROM broken WHERE id >= 1"]) {
      const body = await (await get(q(sql))).text();
      expect(body).toContain("column 'n', rowid 2");
      expect(body).not.toContain("sk_live");
    }
  } finally {
    console.error = original;
  }
  expect(logged.some((line) => line.includes("sk_live_do_not_leak") && line.includes("rowid 2"))).toBe(true);
});
