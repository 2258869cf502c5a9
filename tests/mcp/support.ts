/**
 * An MCP client for the tests: the official SDK's `Client` over its Streamable HTTP client
 * transport, as agents connect. `connectMcp` takes a base URL and, for `app.handle()` tests, the
 * app itself as the transport's fetch (same requests, no socket).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface McpSession {
  client: Client;
  call(name: string, args?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export async function connectMcp(baseUrl: string, app?: { handle(request: Request): Promise<Response> }): Promise<McpSession> {
  const client = new Client({ name: "arrow402-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    ...(app === undefined ? {} : { fetch: (input: string | URL | Request, init?: RequestInit) => app.handle(new Request(input, init)) }),
  });
  await client.connect(transport);
  return {
    client,
    call: async (name, args = {}, meta) =>
      (await client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })) as CallToolResult,
    close: () => client.close(),
  };
}

/** The text of a tool result's first content item. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  if (first?.type !== "text") throw new Error(`expected text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}
