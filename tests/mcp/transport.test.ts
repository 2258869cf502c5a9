/**
 * The MCP endpoint as a transport (src/mcp/server.ts), through `app.handle()`: stateless Streamable
 * HTTP answering JSON, what it refuses and how, the tools' argument checks, the wire form of
 * values, and the endpoint's place in the discovery document and CORS. Payments are in
 * tests/e2e/mcp-payments.test.ts, against the devnet.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { MAX_TOOL_CALLS_PER_POST, mcpMaxBodyBytes } from "../../src/mcp/server.ts";
import { buildApp, type BuiltApp } from "../../src/server.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";
import { connectMcp, paymentRequiredOf, refusalOf, textOf, type McpSession } from "./support.ts";

const BASE = "http://localhost:4021";
let built: BuiltApp;
let mcp: McpSession;

beforeAll(async () => {
  const dir = tempDir();
  createTypesDatabase(join(dir, "types.sqlite"));
  built = await buildApp(typesConfig(dir, { server: { bind: "127.0.0.1:4021", base_url: BASE }, limits: { mcp_max_rows: 3 } }));
  mcp = await connectMcp(BASE, built.app);
});
afterAll(async () => {
  await mcp.close();
  await built.close();
});

/** One JSON-RPC request as a bare POST, the way any Streamable HTTP client sends it. */
function rpc(method: string, params: unknown, headers: Record<string, string> = {}) {
  return built.app.handle(
    new Request(`${BASE}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": LATEST_PROTOCOL_VERSION, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
    }),
  );
}

describe("Streamable HTTP, stateless", () => {
  test("a tools/call is one POST answered with JSON, without initialize and without a session", async () => {
    const response = await rpc("tools/call", { name: "query", arguments: { sql: "SELECT id, big FROM kinds WHERE id IN (1, 2)" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(response.headers.get("mcp-session-id")).toBeNull();
    const text = await response.text();
    // int64 beyond 2^53 as a string of its exact digits in structuredContent itself, not only in the text copy.
    expect(text).toContain('"structuredContent":{"columns":[{"name":"id","type":"Int64"},{"name":"big","type":"Int64"}],"rows":[[1,"9007199254740993"],[2,"-9223372036854775808"]],"row_count":2}');
  });

  test.each(["GET", "DELETE", "PUT"])("%s /mcp: 405, Allow: POST, a JSON-RPC error saying to POST", async (method) => {
    const response = await built.app.handle(new Request(`${BASE}/mcp`, { method, headers: { accept: "text/event-stream" } }));
    expect(response.status).toBe(method === "PUT" ? 404 : 405);
    if (method !== "PUT") {
      expect(response.headers.get("allow")).toBe("POST");
      expect((await response.json()).error.message).toContain("send each JSON-RPC message as a POST to /mcp");
    }
  });

  test("a POST that does not accept JSON and event streams is refused by the SDK transport (406)", async () => {
    expect((await rpc("tools/list", {}, { accept: "text/html" })).status).toBe(406);
  });

  test("an unknown tool is a JSON-RPC error naming the tools", async () => {
    const body = await (await rpc("tools/call", { name: "drop_table", arguments: {} })).json();
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain("Unknown tool 'drop_table': the tools are list_tables, describe_table, query");
  });

  test("CORS: a browser's preflight for a POST with MCP headers is allowed", async () => {
    const response = await built.app.handle(
      new Request(`${BASE}/mcp`, {
        method: "OPTIONS",
        headers: { origin: "https://agent.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type, mcp-protocol-version" },
      }),
    );
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")!.toLowerCase()).toContain("mcp-protocol-version");
  });
});

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" };

/** JSON-RPC messages as one batch POST (MCP before 2025-06-18). */
function batch(messages: unknown[]) {
  return built.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(messages) }));
}

const queryCall = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "query", arguments: { sql: `SELECT id FROM kinds WHERE id = ${id}` } } });

describe("batches", () => {
  test(`a batch of ${MAX_TOOL_CALLS_PER_POST} tool calls is answered, one result per call`, async () => {
    const calls = Array.from({ length: MAX_TOOL_CALLS_PER_POST }, (_, i) => queryCall(i + 1));
    const response = await batch([...calls, { jsonrpc: "2.0", id: 100, method: "tools/list", params: {} }]);
    expect(response.status).toBe(200);
    const answers = (await response.json()) as { id: number; result: { structuredContent?: { row_count: number } } }[];
    expect(answers.map((answer) => answer.id).sort((a, b) => a - b)).toEqual([...calls.map((call) => call.id), 100]);
    // kinds has ids 1 to 4.
    expect(answers.filter((answer) => answer.id <= 4).every((answer) => answer.result.structuredContent?.row_count === 1)).toBe(true);
  });

  test("one more is refused before any runs: 400, a JSON-RPC error saying how many a POST may carry", async () => {
    const calls = Array.from({ length: MAX_TOOL_CALLS_PER_POST + 1 }, (_, i) => queryCall(i + 1));
    const response = await batch(calls);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: `Invalid Request: this batch carries ${MAX_TOOL_CALLS_PER_POST + 1} tool calls, more than ${MAX_TOOL_CALLS_PER_POST} (arrow402's limit per POST): send at most ${MAX_TOOL_CALLS_PER_POST} per POST.` },
      id: null,
    });
  });

  test("a batch of the most calls with the longest SQL fits the body limit; a body past it is 413 before it is parsed", async () => {
    const maxQueryBytes = 16_384; // the default of limits.max_query_bytes
    // The longest accepted text, with quotes JSON escapes: each call as long as a call can be.
    const longSql = (id: number) => `SELECT id FROM kinds WHERE id = ${id} OR label = '${'"'.repeat(maxQueryBytes - 60)}'`;
    const calls = Array.from({ length: MAX_TOOL_CALLS_PER_POST }, (_, i) => ({ ...queryCall(i + 1), params: { name: "query", arguments: { sql: longSql(i + 1) } } }));
    const body = JSON.stringify(calls);
    expect(body.length).toBeGreaterThan(MAX_TOOL_CALLS_PER_POST * 2 * (maxQueryBytes - 60));
    const answered = await built.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: MCP_HEADERS, body }));
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as unknown[]).length).toBe(MAX_TOOL_CALLS_PER_POST);

    const limit = mcpMaxBodyBytes(maxQueryBytes);
    const tooLarge = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_tables", arguments: { padding: "x".repeat(limit) } } });
    const refused = await built.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: MCP_HEADERS, body: tooLarge }));
    expect(refused.status).toBe(413);
    expect((await refused.json()).error).toEqual({
      code: -32000,
      message: `Payload Too Large: a request body must not exceed ${limit} bytes (room for ${MAX_TOOL_CALLS_PER_POST} queries of limits.max_query_bytes): send fewer tool calls per POST, or shorter arguments.`,
    });
  });

  test("a body that is not JSON is the SDK's parse error", async () => {
    const response = await built.app.handle(
      new Request(`${BASE}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "[{" }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toEqual({ code: -32700, message: "Parse error: Invalid JSON" });
  });

  test("a body cut off mid-way is a parse error saying so, not a server error", async () => {
    const cut = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0",'));
        controller.error(new Error("connection closed"));
      },
    });
    const response = await built.app.handle(
      new Request(`${BASE}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: cut }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toEqual({ code: -32700, message: "Parse error: the request body was cut off (the connection closed before it ended): send the whole message." });
  });
});

describe("tool arguments and answers", () => {
  test.each([
    ["query", {}, "The query tool takes {\"sql\": \"SELECT ... FROM <table> ...\"}"],
    ["query", { sql: "SELECT id FROM kinds", limit: 5 }, "The query tool takes"],
    ["query", Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])), "(arguments has 5000 properties)"],
    ["query", { sql: 42 }, "The query tool takes"],
    ["describe_table", {}, 'The describe_table tool takes {"name": "<table>"}'],
    ["list_tables", { all: true }, "The list_tables tool takes no arguments"],
  ])("%s with %j: a 400 tool error saying what to send", async (tool, args, message) => {
    const refused = refusalOf(await mcp.call(tool, args as Record<string, unknown>));
    expect(refused.status).toBe(400);
    expect(refused.error).toContain(message);
  });

  test.each([
    ["SELECT * FROM nowhere", "nowhere"],
    ["DELETE FROM kinds", "DELETE"],
    ["SELECT id FROM kinds; SELECT id FROM kinds", "one"],
  ])("refused SQL %p is a 400 tool error naming %p", async (sql, construct) => {
    const refused = refusalOf(await mcp.call("query", { sql }));
    expect(refused.status).toBe(400);
    expect(refused.error.toLowerCase()).toContain(construct.toLowerCase());
  });

  test.each([
    ["query", { sql: "SELECT id FROM kinds WHERE label = '\ud800'" }, "query holds a lone UTF-16 surrogate (\\ud800)"],
    ["describe_table", { name: "kinds\udfff" }, "table name holds a lone UTF-16 surrogate (\\udfff)"],
  ])("%s with a lone surrogate (JSON carries it, no URL can): a 400 saying so, not a 500", async (tool, args, message) => {
    const refused = refusalOf(await mcp.call(tool, args));
    expect(refused.status).toBe(400);
    expect(refused.error).toContain(message);
  });

  test("over mcp_max_rows on a free table: refused, not truncated, with the HTTP URL of the same SQL", async () => {
    const sql = "SELECT id, label FROM kinds WHERE id <> 0";
    const refused = refusalOf(await mcp.call("query", { sql }));
    expect(refused.error).toContain("The result has 4 rows, more than the 3 one MCP call may return (limits.mcp_max_rows)");
    expect(refused.error).toEndWith(`GET ${BASE}/api/query?query=SELECT%20id%2C%20label%20FROM%20kinds%20WHERE%20id%20%3C%3E%200`);
    expect((await mcp.call("query", { sql: "SELECT id FROM kinds LIMIT 3" })).structuredContent).toMatchObject({ row_count: 3 });
  });

  test("a paid query's PaymentRequired names the HTTP URL of the same SQL, exactly as the HTTP route builds it", async () => {
    const sql = "SELECT id, name FROM items WHERE name IN ('item-2', 'item-3') ORDER BY id";
    const viaMcp = paymentRequiredOf(await mcp.call("query", { sql }));
    const viaHttp = await (await built.app.handle(new Request(`${BASE}/api/query?query=${encodeURIComponent(sql)}`))).json();
    expect(viaMcp).toEqual(viaHttp);
    expect(viaMcp.resource.url).toBe(`${BASE}/api/query?query=${encodeURIComponent(sql).replaceAll("'", "%27")}`);
  });

  test("the text copy of a result is the JSON of its structured content", async () => {
    const result = await mcp.call("describe_table", { name: "kinds" });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });
});

test("the discovery document lists POST /mcp with its row cap", async () => {
  const doc = await (await built.app.handle(new Request(`${BASE}/api/`))).json();
  expect(doc.endpoints["POST /mcp"].description).toContain("at most 3 rows");
  expect(doc.endpoints["POST /mcp"].description).toContain('_meta["x402/payment"]');
});
