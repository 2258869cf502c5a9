/**
 * Fuzzing `POST /mcp` (DESIGN.md §12): JSON-RPC messages with odd ids, methods, params, tool names,
 * arguments and `_meta`, batches, broken bytes and the transport's headers; and tool calls paid with
 * real payments altered as in the HTTP payment fuzzer, carried in `_meta["x402/payment"]`. Every
 * answer must be documented JSON-RPC, every tool result data, a PaymentRequired or a one-line
 * refusal with a documented status; no paid rows or sold metadata without a settlement; and at the
 * end the payer's balance moved by exactly the receipts the answers carried.
 */
import { afterAll, beforeAll, test } from "bun:test";
import type { PaymentRequired } from "@x402/core/types";
import { newPayer, type Payer } from "../support/paying.ts";
import { startEnvironment, type FuzzEnvironment, type FuzzServer } from "./environment.ts";
import { checkMcpAnswer } from "./mcp-oracle.ts";
import { mcpMessage, type ToolCall } from "./mcp-gen.ts";
import { checkMoney } from "./money.ts";
import { alterPayment } from "./payment-gen.ts";
import { exchange, type Exchange } from "./raw-http.ts";
import { fuzzSettings, share, type Random } from "./random.ts";
import { FuzzRun, unlessSlow, type FuzzCase } from "./runner.ts";
import { sqlText } from "./sql-gen.ts";

const settings = fuzzSettings();
const COUNT = share(settings, 0.2);
let env: FuzzEnvironment;
let payer: Payer;
let before: bigint;
let run: FuzzRun;

const MCP_HEADERS: [string, string][] = [
  ["Content-Type", "application/json"],
  ["Accept", "application/json, text/event-stream"],
];

/** Paid calls with small prices (the tight server caps MCP results at 2 rows). */
const PAID_CALLS: ToolCall[] = [
  { tool: "query", args: { sql: "SELECT id FROM items WHERE id <= 2" } },
  { tool: "query", args: { sql: "SELECT id, name FROM cheap_items LIMIT 2" } },
  { tool: "query", args: { sql: "SELECT * FROM flat_items LIMIT 1" } },
  { tool: "query", args: { sql: "SELECT id FROM items WHERE id > 190" } },
  { tool: "describe_table", args: { name: "items" } },
];

function callBody(call: ToolCall, id: number): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: call.tool, arguments: call.args, ...(call.meta === undefined ? {} : { _meta: call.meta }) } });
}

const quotes = new Map<string, Promise<PaymentRequired>>();

/** The PaymentRequired of an unpaid call (asked once per server and call). */
function quoteOf(server: FuzzServer, call: ToolCall): Promise<PaymentRequired> {
  const key = `${server.name} ${JSON.stringify(call)}`;
  let quote = quotes.get(key);
  if (quote === undefined) {
    quote = unlessSlow(() => exchange(server.origin, { method: "POST", target: "/mcp", headers: MCP_HEADERS, body: callBody(call, 1) }, 30_000)).then((result) => {
      const text = result.kind === "response" ? new TextDecoder().decode(result.response.body) : result.kind;
      const structured = JSON.parse(text)?.result?.structuredContent;
      if (structured?.x402Version !== 2) throw new Error(`no PaymentRequired for ${key}: ${text.slice(0, 300)}`);
      return structured as PaymentRequired;
    });
    quotes.set(key, quote);
    // A failed quote is asked again by the next case rather than failing every case after it.
    quote.catch(() => quotes.delete(key));
  }
  return quote;
}

/** The answer's checks beyond the HTTP oracle: the JSON-RPC and tool results, receipts recorded. */
function mcpChecks(server: FuzzServer, call: ToolCall | undefined, mustRefuse?: string) {
  return (result: Exchange): string[] => {
    if (result.kind !== "response" || result.response.status !== 200) return [];
    const verdict = checkMcpAnswer(new TextDecoder().decode(result.response.body), call, env.reads, { mustRefuse });
    run.receipts.push(...verdict.receipts.map((receipt) => ({ ...receipt, server: server.name })));
    return verdict.problems;
  };
}

async function paidCase(rng: Random, server: FuzzServer): Promise<FuzzCase> {
  // 10 rows: over the tight server's row limit, refused before any quote there.
  const call = rng.pick(server === env.tight ? PAID_CALLS.filter((c) => !JSON.stringify(c.args).includes("> 190")) : PAID_CALLS);
  const required = await quoteOf(server, call);
  const payload = await payer.sign({ ...required, accepts: [rng.pick(required.accepts)] });
  const others = PAID_CALLS.filter((other) => other !== call && other.tool === "query");
  const otherResource = `${server.url}/api/query?query=${encodeURIComponent((rng.pick(others).args as { sql: string }).sql)}`;
  const altered = alterPayment(rng, payload, { stranger: `0x${"11".repeat(20)}`, otherResource, nowSeconds: BigInt(Math.floor(Date.now() / 1000)) }, false);
  const paid = { ...call, meta: { "x402/payment": altered.value } };
  const mustRefuse = altered.mustRefuse ? altered.name : undefined;
  const request = { method: "POST", target: "/mcp", headers: MCP_HEADERS, body: callBody(paid, rng.int(1, 1000)) };
  return { kind: `mcp/paid-${mustRefuse ? "must-refuse" : "may-pay"}`, server, request, mustRefuse, note: altered.name, extra: mcpChecks(server, paid, mustRefuse) };
}

beforeAll(async () => {
  env = await startEnvironment({ process: false });
  payer = await newPayer(env.sandbox.devnet, 100_000_000n);
  before = await env.sandbox.devnet.balanceOf(payer.address);
}, 60_000);
afterAll(() => env?.stop());

test(`MCP messages get documented JSON-RPC answers, and paid results only with a settlement (${COUNT} requests, seed ${settings.seed})`, async () => {
  run = new FuzzRun("mcp", settings, env);
  const tables = env.catalog.tables.map((table) => table.name);
  await run.run(COUNT, async (rng) => {
    const server = rng.chance(0.75) ? env.main : env.tight;
    if (rng.chance(0.3)) return paidCase(rng, server);
    const message = mcpMessage(rng, () => sqlText(rng, env.catalog).sql, tables);
    const method = rng.chance(0.97) ? "POST" : rng.pick(["GET", "DELETE", "PUT", "HEAD", "OPTIONS"]);
    return { kind: `mcp/${method}`, server, request: { method, target: "/mcp", headers: message.headers, body: method === "GET" || method === "HEAD" ? undefined : message.body }, extra: mcpChecks(server, message.call) };
  });
  console.log(`mcp fuzz, seed ${settings.seed}: ${run.summary()}`);
  run.assertClean();
}, 600_000);

test("the payer's balance moved by exactly the MCP receipts, and the ledgers record exactly those", async () => {
  const problems = await checkMoney({ env, payer: payer.address, before, receipts: run.receipts, outageKeys: new Set(), untouched: [] });
  if (problems.length > 0) throw new Error(`seed ${settings.seed} (ARROW402_FUZZ_SEED=${settings.seed} bun test tests/fuzz/mcp.test.ts):\n${problems.join("\n")}`);
}, 120_000);
