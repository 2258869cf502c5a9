/**
 * An MCP client for the tests: the official SDK's `Client` over its Streamable HTTP client
 * transport, as agents connect. `connectMcp` takes a base URL and, for `app.handle()` tests, the
 * app itself as the transport's fetch (same requests, no socket).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";

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

/** The x402 PaymentRequired of a tool result, checked as the x402 MCP transport defines it. */
export function paymentRequiredOf(result: CallToolResult): PaymentRequired & { error: string } {
  if (result.isError !== true) throw new Error(`expected a PaymentRequired tool error, got ${JSON.stringify(result).slice(0, 300)}`);
  const structured = result.structuredContent as (PaymentRequired & { error: string }) | undefined;
  if (structured?.x402Version !== 2 || !Array.isArray(structured.accepts)) {
    throw new Error(`expected an x402 PaymentRequired in structuredContent, got ${textOf(result)}`);
  }
  // content[0].text is JSON.stringify(structuredContent) (x402 specs/transports-v2/mcp.md).
  if (textOf(result) !== JSON.stringify(structured)) throw new Error("content[0].text is not the JSON of structuredContent");
  return structured;
}

/** A tool error that is not a payment request: `{status, error}` in structuredContent, the same line as text. */
export function refusalOf(result: CallToolResult): { status: number; error: string } {
  const structured = result.structuredContent as { status?: number; error?: string } | undefined;
  if (result.isError !== true || typeof structured?.status !== "number" || structured.error !== textOf(result)) {
    throw new Error(`expected a tool error with {status, error}, got ${JSON.stringify(result).slice(0, 400)}`);
  }
  return { status: structured.status, error: structured.error };
}

/** `_meta["x402/payment-response"]` of a tool result. */
export function receiptOf(result: CallToolResult): { success: boolean; transaction: string; network: string; payer?: string } | undefined {
  return result._meta?.["x402/payment-response"] as never;
}

/**
 * What an x402 agent does (x402's own MCP client wrapper, `x402MCPClient.callTool`): call, and on a
 * PaymentRequired sign an offer with the x402 client and call again with it in `_meta["x402/payment"]`.
 */
export async function callPaying(session: McpSession, sign: (required: PaymentRequired) => Promise<PaymentPayload>, name: string, args: Record<string, unknown>) {
  const quoted = await session.call(name, args);
  const required = paymentRequiredOf(quoted);
  const payload = await sign(required);
  const paid = await session.call(name, args, { "x402/payment": payload });
  return { quoted, required, payload, paid };
}
