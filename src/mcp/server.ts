/**
 * `POST /mcp`: MCP over Streamable HTTP, stateless (ARCHITECTURE.md §12), with the official SDK's
 * web-standard transport (Request in, Response out, as Bun and Elysia speak). Stateless means one
 * SDK server and one transport per HTTP request (the SDK refuses to reuse a stateless transport):
 * no session is kept, so any replica answers any call, and answers are plain JSON rather than an
 * SSE stream. GET (a server-to-client stream) and DELETE (ending a session) have nothing to serve
 * here: 405, as the MCP transport allows.
 *
 * The SDK's low-level `Server` is used rather than `McpServer`: the tools' schemas are JSON Schema
 * written for agents to read, arguments are checked here with readable messages, and the payment
 * travels in `params._meta`, which the tool call reads as given.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { createToolCalls, mcpRowCap, type ToolCallDeps } from "./calls.ts";
import { errorResult, PAYMENT_META } from "./results.ts";
import { TOOL_NAMES, toolDefinitions, type ToolName } from "./tools.ts";

export interface McpDeps extends ToolCallDeps {
  version: string;
}

export type McpHandler = (request: Request) => Promise<Response>;

export function createMcpHandler(deps: McpDeps): McpHandler {
  const tools = toolDefinitions(deps.config);
  const call = createToolCalls(deps);
  const instructions =
    "arrow402 publishes SQLite tables. list_tables shows the tables, their columns and prices; query runs one read-only " +
    `SELECT on one table and returns at most ${mcpRowCap(deps.config)} rows. Paid tables use x402: an unpaid call returns ` +
    `a PaymentRequired tool error; call again with a signed PaymentPayload in params._meta["${PAYMENT_META}"]. ` +
    `Larger results: GET ${deps.config.server.baseUrl}/api/query?query=<URL-encoded SQL> (Apache Arrow).`;

  function newServer(httpSignal: AbortSignal): Server {
    const server = new Server({ name: "arrow402", version: deps.version }, { capabilities: { tools: {} }, instructions });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = request.params.name;
      if (!(TOOL_NAMES as readonly string[]).includes(tool)) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${tool}': the tools are ${TOOL_NAMES.join(", ")}`);
      }
      try {
        return await call({
          tool: tool as ToolName,
          arguments: request.params.arguments,
          meta: request.params._meta as Record<string, unknown> | undefined,
          // The client went away (HTTP) or cancelled the call (MCP): nothing is settled for it.
          signal: AbortSignal.any([httpSignal, extra.signal]),
        });
      } catch (error) {
        return errorResult(error);
      }
    });
    return server;
  }

  return async (request) => {
    if (request.method !== "POST") {
      return Response.json(
        { jsonrpc: "2.0", error: { code: -32000, message: "This MCP server is stateless: send each JSON-RPC message as a POST to /mcp." }, id: null },
        { status: 405, headers: { allow: "POST" } },
      );
    }
    const server = newServer(request.signal);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      // With JSON responses the answer is complete when this resolves: the server can go.
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  };
}
