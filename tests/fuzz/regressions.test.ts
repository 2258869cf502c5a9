/**
 * Bugs the fuzzer found, each as a plain test against a real server (raw requests: `fetch` cannot
 * send most of these).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";
import { exchange, type FuzzRequest } from "./raw-http.ts";

let server: RunningServer;
let origin: URL;

beforeAll(async () => {
  const dir = tempDir();
  createTypesDatabase(join(dir, "types.sqlite"));
  server = await startServer(typesConfig(dir), { workers: 1 });
  origin = new URL(server.url);
});
afterAll(() => server.stop());

async function send(request: FuzzRequest): Promise<{ status: number; type: string; text: string }> {
  const result = await exchange(origin, request, 10_000);
  if (result.kind !== "response") throw new Error(`no response: ${result.kind}`);
  return { status: result.response.status, type: result.response.headers["content-type"] ?? "", text: new TextDecoder().decode(result.response.body) };
}

const MCP_HEADERS: [string, string][] = [
  ["Content-Type", "application/json"],
  ["Accept", "application/json, text/event-stream"],
];
const LIST_TOOLS = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';

describe("the Host header", () => {
  // Elysia's router assumed hosts of 4 characters or more and read the path from the 11th
  // character of the URL: `Host: api` made GET /api/ a 404 (and /api/query?... the route "/query").
  test.each(["a", "db", "api", "web:80", "abcd", "[::1]"])("a short or ordinary host (%p) reaches every route", async (host) => {
    expect((await send({ method: "GET", target: "/api/", headers: [["Host", host]] })).status).toBe(200);
    expect((await send({ method: "GET", target: "/api/query?query=SELECT%20id%20FROM%20kinds", headers: [["Host", host]] })).status).toBe(200);
    expect((await send({ method: "GET", target: "/api/table/kinds", headers: [["Host", host]] })).status).toBe(200);
    expect((await send({ method: "POST", target: "/mcp", headers: [["Host", host], ...MCP_HEADERS], body: LIST_TOOLS })).status).toBe(200);
  });

  // A Host that leaves request.url unparsable made `new URL(request.url)` throw in the query and
  // table routes (500 "Internal server error") and in the MCP SDK (a JSON-RPC parse error quoting
  // the TypeError): RFC 9112 §3.2 wants a 400.
  test.each(["a b", "evil:99999", "a:b:c", "", "@", "%zz", "[", "é"])("an invalid host (%p) is a 400 saying what to send, on every route", async (host) => {
    for (const request of [
      { method: "GET", target: "/api/query?query=SELECT%20id%20FROM%20kinds", headers: [["Host", host]] },
      { method: "GET", target: "/api/table/items", headers: [["Host", host]] },
      { method: "GET", target: "/api/", headers: [["Host", host]] },
      { method: "POST", target: "/mcp", headers: [["Host", host], ...MCP_HEADERS], body: LIST_TOOLS },
    ] as FuzzRequest[]) {
      const answer = await send(request);
      expect(answer).toEqual({ status: 400, type: "text/plain; charset=utf-8", text: expect.stringContaining("The Host header is not a valid host") });
    }
  });
});

// A table name with a line break came back verbatim in the MCP refusal ("Table 'a
// b' not found"): the one readable line of DESIGN.md §8 broke on client text.
describe("client text quoted in a message", () => {
  const NAME = "MA\u0012\tx@\u000b\n\u2028";
  const ESCAPED = "MA\\u0012\\u0009x@\\u000b\\u000a\\u2028";

  test("stays on one line in an MCP refusal", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "describe_table", arguments: { name: NAME } } });
    const answer = await send({ method: "POST", target: "/mcp", headers: MCP_HEADERS, body });
    const result = JSON.parse(answer.text).result;
    expect(result.structuredContent).toEqual({ status: 404, error: `Table '${ESCAPED}' not found` });
    expect(result.content).toEqual([{ type: "text", text: `Table '${ESCAPED}' not found` }]);
  });

  test("and in the table endpoint's 404", async () => {
    const answer = await send({ method: "GET", target: `/api/table/${encodeURIComponent(NAME)}`, headers: [] });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toEqual({ error: `Table '${ESCAPED}' not found` });
  });
});
