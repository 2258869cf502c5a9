/**
 * The paywall (ARCHITECTURE.md §15): a browser navigating to a paid resource gets the 402 as an HTML
 * page with the checkout, the PAYMENT-REQUIRED header set as on every 402; every other client gets
 * the JSON 402 unchanged (x402-headers.ts). A navigation is told apart by its `Accept`: it names
 * `text/html` and nothing ahead of it, and does not name JSON as high (browsers send
 * `text/html,application/xhtml+xml,…,*\/*;q=0.8`); fetch() and x402 clients send `*\/*`, JSON or a
 * data format. The page's script is the checkout bundle, served at CHECKOUT_SCRIPT_PATH.
 */
import { CHECKOUT_BUNDLE } from "../checkout/bundle.ts";
import { renderPaywallPage } from "../checkout/paywall-page.ts";
import type { CheckoutSetup } from "../checkout/setup-types.ts";
import type { SettlementReceipt } from "../payment/core.ts";
import type { PaymentRequiredBody } from "../payment/pricing.ts";
import { PAID_CACHE_CONTROL, PAYMENT_REQUIRED, PAYMENT_RESPONSE, encodeHeaderJson } from "../payment/wire.ts";
import { parseAccept } from "../formats/negotiate.ts";

/** Whether `accept` asks for HTML first, as a browser's navigation does. */
export function prefersHtml(accept: string | null): boolean {
  if (accept === null || accept.trim() === "") return false;
  const ranges = parseAccept(accept);
  const qOf = (type: string) => Math.max(0, ...ranges.filter((r) => `${r.type}/${r.subtype}` === type).map((r) => r.q));
  const html = qOf("text/html");
  if (html === 0) return false;
  const first = ranges.find((r) => r.q === Math.max(...ranges.map((x) => x.q)));
  return first !== undefined && `${first.type}/${first.subtype}` === "text/html" && qOf("application/json") < html;
}

/** The 402 as the paywall page, with the headers of paymentRequiredResponse. */
export function paywallResponse(body: PaymentRequiredBody, settlement: SettlementReceipt | undefined, setup: CheckoutSetup, head: boolean): Response {
  const headers: Record<string, string> = {
    [PAYMENT_REQUIRED]: encodeHeaderJson(body),
    "cache-control": PAID_CACHE_CONTROL,
    "content-type": "text/html; charset=utf-8",
    vary: "Accept",
  };
  if (settlement !== undefined) headers[PAYMENT_RESPONSE] = encodeHeaderJson(settlement);
  return new Response(head ? null : renderPaywallPage(body, setup), { status: 402, headers });
}

/** `GET /api/checkout.js`: the paywall page's script. */
export function checkoutScriptResponse(): Response {
  return new Response(CHECKOUT_BUNDLE, {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" },
  });
}
