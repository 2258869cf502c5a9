/**
 * Tool results of the MCP binding, as the x402 V2 MCP transport defines them (x402
 * `specs/transports-v2/mcp.md`):
 *
 * - data: `structuredContent` and the same JSON as text in `content` (MCP: a tool that returns
 *   structured content also returns it serialised), the settlement receipt in
 *   `_meta["x402/payment-response"]` when paid;
 * - payment required: `isError: true`, the `PaymentRequired` body in `structuredContent` and
 *   `JSON.stringify` of it in `content[0].text`; a failed settlement adds its receipt in `_meta`,
 *   as PAYMENT-RESPONSE accompanies the HTTP 402;
 * - any other refusal: `isError: true` with one readable line in `content[0].text`, and
 *   `structuredContent: {status, error}` where `status` is the HTTP status the same refusal has
 *   over HTTP (400 bad SQL or payload, 404 unknown table, 409 payment-identifier conflict, 429, 500).
 *   It is not a `PaymentRequired`, so x402 clients do not try to pay for it.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Arrow402Error } from "../errors.ts";
import type { SettlementReceipt } from "../payment/core.ts";
import type { PaymentRequiredBody } from "../payment/pricing.ts";

/** `params._meta` key of the client's PaymentPayload. */
export const PAYMENT_META = "x402/payment";
/** `result._meta` key of the SettleResponse. */
export const PAYMENT_RESPONSE_META = "x402/payment-response";

export function dataResult(structured: Record<string, unknown>, receipt: SettlementReceipt | null = null): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
    ...(receipt === null ? {} : { _meta: { [PAYMENT_RESPONSE_META]: receipt } }),
  };
}

export function paymentRequiredResult(body: PaymentRequiredBody, settlement?: SettlementReceipt): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify(body) }],
    structuredContent: body as unknown as Record<string, unknown>,
    ...(settlement === undefined ? {} : { _meta: { [PAYMENT_RESPONSE_META]: settlement } }),
  };
}

/** Whether a tool result is a paid answer (a receipt in `_meta`) or a PaymentRequired. */
export function carriesPayment(result: CallToolResult): boolean {
  return result._meta?.[PAYMENT_RESPONSE_META] !== undefined || (result.isError === true && Array.isArray(result.structuredContent?.accepts));
}

/** A thrown error as a tool error; the unexpected ones are logged and never shown. */
export function errorResult(error: unknown): CallToolResult {
  if (error instanceof Arrow402Error) return refusal(error.status, error.message);
  console.error("arrow402: unexpected error in an MCP tool:", error);
  return refusal(500, "Internal server error");
}

export function refusal(status: number, message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }], structuredContent: { status, error: message } };
}
