/**
 * What a 200 from `POST /mcp` must hold (DESIGN.md §12, README "Agents (MCP)", x402
 * `specs/transports-v2/mcp.md`): JSON-RPC answers; a tool result is data (with its text copy), an
 * x402 PaymentRequired (`isError`, the same JSON as text), or a refusal `{status, error}` whose
 * status is a documented one and whose error is one readable line; data of a paid table (a query
 * reading any table but the free one, or the sold metadata of `items`) only with a successful
 * receipt in `_meta["x402/payment-response"]`.
 */
import { parseJson, type Receipt } from "./oracle.ts";
import type { TableReads } from "./table-reads.ts";
import type { ToolCall } from "./mcp-gen.ts";

const REFUSALS = new Set([400, 404, 409, 429, 503]);
const INTERNALS = /\n\s+at |\.ts:\d+|TypeError|ReferenceError|RangeError|Internal server error/;

export interface McpVerdict {
  problems: string[];
  receipts: Receipt[];
}

/**
 * Checks the answer to one message; `call` is its tools/call when it was one, `outage` whether a
 * facilitator failure was staged (then a refusal with status 500 is documented), `mustRefuse` why
 * the payment it carried cannot pay.
 */
export function checkMcpAnswer(text: string, call: ToolCall | undefined, reads: TableReads, options: { outage?: boolean; mustRefuse?: string } = {}): McpVerdict {
  const problems: string[] = [];
  const receipts: Receipt[] = [];
  const body = parseJson(text);
  if (body === undefined) return { problems: [`a 200 from /mcp that is not JSON: ${text.slice(0, 200)}`], receipts };
  for (const answer of Array.isArray(body) ? body : [body]) {
    if (answer?.jsonrpc !== "2.0" || !("result" in answer || "error" in answer)) {
      problems.push(`an answer that is not JSON-RPC 2.0: ${JSON.stringify(answer).slice(0, 200)}`);
      continue;
    }
    if ("error" in answer) {
      if (typeof answer.error?.code !== "number" || typeof answer.error?.message !== "string") problems.push(`a JSON-RPC error without code and message: ${JSON.stringify(answer.error).slice(0, 200)}`);
      else if (INTERNALS.test(answer.error.message) || (answer.error.data !== undefined && INTERNALS.test(JSON.stringify(answer.error.data)))) problems.push(`a JSON-RPC error showing internals: ${JSON.stringify(answer.error).slice(0, 300)}`);
      continue;
    }
    const result = answer.result;
    if (!Array.isArray(result?.content)) continue; // not a tool result (tools/list, initialize, ping)
    checkToolResult(result, Array.isArray(body) ? undefined : call, reads, options, problems, receipts);
  }
  return { problems, receipts };
}

function checkToolResult(result: any, call: ToolCall | undefined, reads: TableReads, options: { outage?: boolean; mustRefuse?: string }, problems: string[], receipts: Receipt[]): void {
  const first = result.content[0];
  const structured = result.structuredContent;
  const receipt = result._meta?.["x402/payment-response"];
  if (result.isError === true) {
    if (structured?.x402Version === 2) {
      if (!Array.isArray(structured.accepts) || typeof structured.resource?.url !== "string") problems.push(`a PaymentRequired tool error without offers or resource: ${JSON.stringify(structured).slice(0, 300)}`);
      if (first?.type !== "text" || first.text !== JSON.stringify(structured)) problems.push("a PaymentRequired whose content[0].text is not its JSON");
      if (receipt?.success === true) problems.push("a PaymentRequired carrying a successful settlement receipt");
      return;
    }
    const status = structured?.status;
    const documented = REFUSALS.has(status) || (status === 500 && options.outage === true);
    if (!documented) problems.push(`a tool refusal with status ${JSON.stringify(status)}: ${JSON.stringify(structured).slice(0, 300)}`);
    if (typeof structured?.error !== "string" || first?.type !== "text" || first.text !== structured.error) problems.push(`a tool refusal whose text is not its error: ${JSON.stringify(result).slice(0, 300)}`);
    else if (/[\r\n]/.test(structured.error) || INTERNALS.test(structured.error)) problems.push(`a tool refusal that is not one readable line: ${JSON.stringify(structured.error).slice(0, 300)}`);
    return;
  }
  if (typeof structured !== "object" || structured === null) problems.push(`a tool result without structuredContent: ${JSON.stringify(result).slice(0, 200)}`);
  else if (first?.type !== "text" || parseJson(first.text) === undefined) problems.push("a tool result whose content[0].text is not its JSON");
  if (receipt !== undefined) {
    if (receipt.success !== true || !/^0x[0-9a-f]{64}$/.test(String(receipt.transaction))) problems.push(`a data result with a receipt that is not a settlement: ${JSON.stringify(receipt)}`);
    else receipts.push({ transaction: receipt.transaction, payer: String(receipt.payer), network: String(receipt.network), resource: `mcp ${call?.tool} ${JSON.stringify(call?.args).slice(0, 200)}` });
  }
  const paid = receipt?.success === true;
  if (paid && options.mustRefuse !== undefined) problems.push(`a payment altered so that it cannot pay (${options.mustRefuse}) was accepted over MCP`);
  if (call?.tool === "query" && typeof (call.args as { sql?: unknown })?.sql === "string") {
    const tables = reads.of((call.args as { sql: string }).sql);
    if (tables === null) problems.push("data for SQL that SQLite itself cannot prepare");
    // An empty result priced at 0 is served free (README "Zero"), except where the schema is sold ('items').
    else if ([...tables].some((table) => table !== "kinds") && !paid && !(Array.isArray(structured?.rows) && structured.rows.length === 0 && !tables.has("items"))) problems.push(`rows of ${[...tables].join(", ")} delivered over MCP without a settlement`);
  }
  if (call?.tool === "describe_table" && structured?.table_name === "items" && !paid) problems.push("the paid metadata of 'items' delivered over MCP without a settlement");
  if (call?.tool === "list_tables") {
    const items = structured?.tables?.find?.((table: { name?: string }) => table.name === "items");
    if (items !== undefined && items.columns !== null) problems.push("list_tables gave away the columns of 'items', whose schema is sold");
  }
}
