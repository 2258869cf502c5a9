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
import { readBodyWithin } from "./request-body.ts";
import type { VerifyBudget } from "../payment/work.ts";
import { PAID_CACHE_CONTROL } from "../payment/wire.ts";
import { carriesPayment, errorResult, PAYMENT_META } from "./results.ts";
import { TOOL_NAMES, toolDefinitions, type ToolName } from "./tools.ts";

export interface McpDeps extends ToolCallDeps {
  version: string;
}

/**
 * Runs a POST's JSON-RPC exchange once its client may run its `toolCalls` queries (one of them is
 * already counted, from before the body was read: `limits.max_concurrent_per_client`,
 * routes/client-limit.ts).
 */
export type Admission = (toolCalls: number, run: () => Promise<Response>) => Promise<Response>;

export type McpHandler = (request: Request, admit?: Admission, verifyBudget?: VerifyBudget) => Promise<Response>;

/**
 * The most tool calls one POST may carry. A JSON-RPC batch (MCP before 2025-06-18; the SDK takes
 * up to 100 messages) runs its calls at once and answers them in one JSON body held in memory: a
 * batch of 100 queries answered 24 MB and counted as one request. So a batch carries at most this
 * many calls, and each counts as one query for `limits.max_concurrent_per_client`.
 */
export const MAX_TOOL_CALLS_PER_POST = 8;

/**
 * The largest POST body: room for a batch of MAX_TOOL_CALLS_PER_POST queries of `max_query_bytes`
 * each (twice that, for JSON escapes) plus 64 KiB for the envelope and payments. Parsing and
 * checking a body costs the HTTP thread ~0.15 ms per KiB (the SDK's 4 MiB took ~0.6 s), so the
 * bound follows what a call can use, not the SDK's default.
 */
export function mcpMaxBodyBytes(maxQueryBytes: number): number {
  return 64 * 1024 + MAX_TOOL_CALLS_PER_POST * 2 * maxQueryBytes;
}

export function createMcpHandler(deps: McpDeps): McpHandler {
  const tools = toolDefinitions(deps.config);
  const call = createToolCalls(deps);
  const instructions =
    "arrow402 publishes SQLite tables. list_tables shows the tables, their columns and prices; query runs one read-only " +
    `SELECT on one table and returns at most ${mcpRowCap(deps.config)} rows. Paid tables use x402: an unpaid call returns ` +
    `a PaymentRequired tool error; call again with a signed PaymentPayload in params._meta["${PAYMENT_META}"]. ` +
    `Larger results: GET ${deps.config.server.baseUrl}/api/query?query=<URL-encoded SQL> (Apache Arrow).`;

  /** `paid` is called when a tool result is a paid answer or a PaymentRequired. */
  function newServer(httpSignal: AbortSignal, verifyBudget: VerifyBudget | undefined, paid: () => void): Server {
    const server = new Server({ name: "arrow402", version: deps.version }, { capabilities: { tools: {} }, instructions });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = request.params.name;
      if (!(TOOL_NAMES as readonly string[]).includes(tool)) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${tool}': the tools are ${TOOL_NAMES.join(", ")}`);
      }
      try {
        const result = await call({
          tool: tool as ToolName,
          arguments: request.params.arguments,
          meta: request.params._meta as Record<string, unknown> | undefined,
          // The client went away (HTTP) or cancelled the call (MCP): nothing is settled for it.
          signal: AbortSignal.any([httpSignal, extra.signal]),
          verifyBudget,
        });
        if (carriesPayment(result)) paid();
        return result;
      } catch (error) {
        return errorResult(error);
      }
    });
    return server;
  }

  const perClient = deps.config.limits.maxConcurrentPerClient;
  const receiveTimeoutMs = deps.config.limits.receiveTimeoutMs;
  const maxBodyBytes = mcpMaxBodyBytes(deps.config.limits.maxQueryBytes);
  const maxCalls = perClient > 0 ? Math.min(MAX_TOOL_CALLS_PER_POST, perClient) : MAX_TOOL_CALLS_PER_POST;

  async function exchange(request: Request, parsedBody: unknown, verifyBudget: VerifyBudget | undefined): Promise<Response> {
    let paid = false;
    const server = newServer(request.signal, verifyBudget, () => (paid = true));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      // With JSON responses the answer is complete when this resolves: the server can go.
      const response = await transport.handleRequest(request, { parsedBody });
      // As over HTTP (routes/x402-headers.ts): a paid result or a PaymentRequired is nobody else's to keep.
      if (paid) response.headers.set("cache-control", PAID_CACHE_CONTROL);
      return response;
    } finally {
      await server.close();
    }
  }

  return async (request, admit = (_calls, run) => run(), verifyBudget) => {
    if (request.method !== "POST") return jsonRpcError(405, -32000, "This MCP server is stateless: send each JSON-RPC message as a POST to /mcp.", { allow: "POST" });
    // Read here (within our size and time bounds) to count the tool calls before any runs.
    const body = await readBodyWithin(request, maxBodyBytes, receiveTimeoutMs);
    if (body.kind === "too-large") {
      const message =
        `Payload Too Large: a request body must not exceed ${maxBodyBytes} bytes (room for ${MAX_TOOL_CALLS_PER_POST} queries of limits.max_query_bytes): ` +
        "send fewer tool calls per POST, or shorter arguments.";
      return jsonRpcError(413, -32000, message);
    }
    if (body.kind === "too-slow") {
      const seconds = receiveTimeoutMs / 1000;
      const message = `Request Timeout: the request body did not arrive within ${seconds} s (limits.receive_timeout_ms): send the whole JSON-RPC message at once.`;
      return jsonRpcError(408, -32000, message, { connection: "close" });
    }
    if (body.kind === "cut-off") return jsonRpcError(400, -32700, "Parse error: the request body was cut off (the connection closed before it ended): send the whole message.");
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch {
      return jsonRpcError(400, -32700, "Parse error: Invalid JSON");
    }
    const calls = (Array.isArray(parsed) ? parsed : [parsed]).filter((message) => (message as { method?: unknown } | null)?.method === "tools/call").length;
    if (calls > maxCalls) {
      const limit = perClient > 0 && perClient < MAX_TOOL_CALLS_PER_POST ? "limits.max_concurrent_per_client" : "arrow402's limit per POST";
      return jsonRpcError(400, -32600, `Invalid Request: this batch carries ${calls} tool calls, more than ${maxCalls} (${limit}): send at most ${maxCalls} per POST.`);
    }
    return admit(Math.max(calls, 1), () => exchange(request, parsed, verifyBudget));
  };
}

/** A JSON-RPC error answered over HTTP, as the SDK transport answers its own refusals. */
function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}
