/**
 * JSON-RPC bodies and headers for `POST /mcp` (DESIGN.md §12): the MCP methods an agent sends and
 * others, tool calls with odd names, arguments and `_meta` (an x402 payment among them), odd ids,
 * versions, params and batches; then the bytes themselves broken (truncated, not JSON, nested
 * deep) and the headers the Streamable HTTP transport checks.
 */
import type { Random } from "./random.ts";

export interface ToolCall {
  tool: string;
  args: unknown;
  meta?: Record<string, unknown>;
}

export interface McpMessage {
  body: string;
  headers: [string, string][];
  /** The tools/call it carries, when the body is one well-formed call. */
  call?: ToolCall;
}

const GOOD_HEADERS: [string, string][] = [
  ["Content-Type", "application/json"],
  ["Accept", "application/json, text/event-stream"],
];

function id(rng: Random): unknown {
  return rng.weighted<() => unknown>([
    [10, () => rng.int(1, 1000)],
    [2, () => `req-${rng.int(0, 99)}`],
    [1, () => rng.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 2, "", "x".repeat(5000), null, {}, [], true, "\u0000", rng.unicode(5)])],
  ])();
}

function odd(rng: Random): unknown {
  return rng.pick<unknown>([null, 0, -1, 1e308, "", "x".repeat(rng.int(1, 20_000)), [], {}, [1, "a"], { a: { b: { c: [] } } }, true, rng.unicode(20), JSON.parse('{"__proto__":{"polluted":true}}'), { constructor: { prototype: { x: 1 } } }]);
}

/** Arguments for a tool: right ones mostly, the wrong types, extra keys or none otherwise. */
function toolArguments(rng: Random, tool: string, sql: () => string, tables: string[]): unknown {
  const right = tool === "query" ? { sql: sql() } : tool === "describe_table" ? { name: rng.chance(0.8) ? rng.pick(tables) : rng.pick(["", "ITEMS", "items ", "sqlite_master", "../items", rng.unicode(10), "x".repeat(1000)]) } : {};
  return rng.weighted<() => unknown>([
    [10, () => right],
    [1, () => ({ ...right, extra: odd(rng) })],
    [1, () => (tool === "query" ? { sql: odd(rng) } : { name: odd(rng) })],
    [0.5, () => odd(rng)],
    [0.5, () => undefined],
  ])();
}

/** `_meta` of a call: none mostly, odd content otherwise (a real payment is set by the caller). */
function meta(rng: Random): Record<string, unknown> | undefined {
  if (rng.chance(0.8)) return undefined;
  return rng.pick<Record<string, unknown>>([
    { progressToken: id(rng) },
    { "x402/payment": odd(rng) },
    { "x402/payment": { x402Version: 2 } },
    { "x402/payment": { x402Version: 1, payload: {} } },
    { "x402/payment-response": { success: true, transaction: `0x${"ab".repeat(32)}` } },
    { [rng.unicode(5)]: odd(rng) },
  ]);
}

const METHODS = ["initialize", "tools/list", "tools/call", "ping", "notifications/initialized", "notifications/cancelled", "resources/list", "prompts/list", "logging/setLevel", "completion/complete", "resources/read", "sampling/createMessage", "tools/call ", "TOOLS/LIST", "", "rpc.discover", "__proto__"];
const TOOLS = ["query", "describe_table", "list_tables"];

/** One JSON-RPC message as an object. */
function message(rng: Random, sql: () => string, tables: string[]): { value: Record<string, unknown>; call?: ToolCall } {
  const method = rng.weighted<string>([
    [10, "tools/call"],
    [3, "tools/list"],
    [2, "initialize"],
    [1, "notifications/initialized"],
    [2, rng.pick(METHODS)],
  ]);
  const value: Record<string, unknown> = { jsonrpc: "2.0", method };
  if (!method.startsWith("notifications/") || rng.chance(0.1)) value.id = id(rng);
  if (method === "initialize") {
    value.params = { protocolVersion: rng.pick(["2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01", ""]), capabilities: rng.chance(0.9) ? {} : odd(rng), clientInfo: { name: "fuzz", version: "1" } };
  } else if (method === "tools/call") {
    const tool = rng.chance(0.9) ? rng.weighted<string>([[6, "query"], [2, "describe_table"], [1, "list_tables"]]) : rng.pick(["", "QUERY", "query ", "run_sql", "x".repeat(1000), rng.unicode(6), "constructor", "__proto__", "toString"]);
    const args = toolArguments(rng, TOOLS.includes(tool) ? tool : "query", sql, tables);
    const callMeta = meta(rng);
    value.params = { name: tool, ...(args === undefined ? {} : { arguments: args }), ...(callMeta === undefined ? {} : { _meta: callMeta }) };
    if (rng.chance(0.05)) value.params = odd(rng);
    const call = TOOLS.includes(tool) ? { tool, args, ...(callMeta === undefined ? {} : { meta: callMeta }) } : undefined;
    return { value: mutateEnvelope(rng, value), ...(call === undefined ? {} : { call }) };
  } else if (rng.chance(0.2)) {
    value.params = odd(rng);
  }
  return { value: mutateEnvelope(rng, value) };
}

function mutateEnvelope(rng: Random, value: Record<string, unknown>): Record<string, unknown> {
  if (!rng.chance(0.1)) return value;
  const out = { ...value };
  switch (rng.int(0, 3)) {
    case 0:
      out.jsonrpc = rng.pick(["1.0", 2, null, "2.0 ", undefined]);
      break;
    case 1:
      delete out.method;
      break;
    case 2:
      out.result = odd(rng);
      break;
    default:
      out.error = { code: -32600, message: "x" };
  }
  return out;
}

/** A whole `POST /mcp`: body and headers. */
export function mcpMessage(rng: Random, sql: () => string, tables: string[]): McpMessage {
  const shape = rng.weighted<string>([
    [20, "one"],
    [1.5, "batch"],
    [1, "broken"],
  ]);
  let body: string;
  let call: ToolCall | undefined;
  if (shape === "one") {
    const one = message(rng, sql, tables);
    body = JSON.stringify(one.value);
    call = one.call;
  } else if (shape === "batch") {
    const size = rng.pick([0, 1, 2, 5, 100, 101, 1000]);
    body = JSON.stringify(Array.from({ length: size }, () => message(rng, sql, tables).value));
  } else {
    const base = JSON.stringify(message(rng, sql, tables).value);
    body = rng.pick([
      base.slice(0, rng.int(0, base.length - 1)),
      `\ufeff${base}`,
      `${base}${base}`,
      `${base},`,
      "[".repeat(rng.pick([100, 10_000, 100_000])),
      "[".repeat(2000) + "]".repeat(2000),
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${"{\"a\":".repeat(3000)}1${"}".repeat(3000)}}`,
      "",
      "null",
      "1",
      '"tools/list"',
      rng.unicode(rng.size(200)),
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","__proto__":{"polluted":1}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"sql":"${"x".repeat(rng.pick([100_000, 5_000_000]))}"}}}`,
    ]);
  }
  return { body, headers: headers(rng), ...(call === undefined ? {} : { call }) };
}

function headers(rng: Random): [string, string][] {
  if (rng.chance(0.85)) {
    const out: [string, string][] = [...GOOD_HEADERS];
    if (rng.chance(0.2)) out.push(["Mcp-Protocol-Version", rng.pick(["2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01", "", "latest", "2025-06-18, 2025-03-26"])]);
    if (rng.chance(0.05)) out.push(["Mcp-Session-Id", rng.pick(["abc", "", "x".repeat(300)])]);
    return out;
  }
  return [
    ["Content-Type", rng.pick(["application/json", "application/json; charset=utf-8", "text/plain", "application/JSON", "application/json-patch+json", "", "multipart/form-data", "application/json; charset=latin1"])],
    ["Accept", rng.pick(["application/json, text/event-stream", "application/json", "text/event-stream", "*/*", "", "text/event-stream, application/json;q=0", "application/jsonx, text/event-streamx"])],
  ].filter(() => rng.chance(0.9)) as [string, string][];
}
