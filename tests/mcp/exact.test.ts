/**
 * Exact values for agents (DESIGN §16): the official MCP SDK client, over Streamable HTTP to a real
 * server on a loopback port, parses a result with `JSON.parse`. An int64 beyond ±(2^53 - 1) must
 * reach the agent as a string of its exact digits, in `structuredContent` and in the text copy
 * alike, and every int64 that fits as a number.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir, typesConfig } from "../support/fixtures.ts";
import { createExactIntsDatabase, EXACT_INTS } from "../formats/support.ts";
import { connectMcp, textOf, type McpSession } from "./support.ts";

let server: RunningServer;
let mcp: McpSession;
let result: CallToolResult;

beforeAll(async () => {
  const dir = tempDir();
  createExactIntsDatabase(join(dir, "types.sqlite"));
  server = await startServer(typesConfig(dir, { tables: [{ name: "ints", description: "int64 at the edge of 2^53" }] }), { workers: 1 });
  mcp = await connectMcp(server.url);
  result = await mcp.call("query", { sql: "SELECT id, v FROM ints ORDER BY id" });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

describe("int64 as an agent reads it through the SDK client", () => {
  const seen = EXACT_INTS.map(([id, , value]) => [id, value]);

  test.each([
    ["structuredContent", () => result.structuredContent],
    ["the text copy", () => JSON.parse(textOf(result))],
  ])("%s: the big ones as strings of their exact digits, the others as numbers", (_where, read) => {
    expect(result.isError).toBeFalsy();
    expect(read()).toEqual({
      columns: [
        { name: "id", type: "Int64" },
        { name: "v", type: "Int64" },
      ],
      rows: seen,
      row_count: EXACT_INTS.length,
    });
  });

  test("the query tool's description tells the agent a string may appear in an int64 column", async () => {
    const { tools } = await mcp.client.listTools();
    const query = tools.find((tool) => tool.name === "query")!;
    expect(query.description).toContain("int64 a number, or a string of its exact digits beyond ±(2^53 - 1)");
    expect(query.description).toContain("decimals a string of their exact digits");
  });
});
