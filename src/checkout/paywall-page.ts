/**
 * The paywall page (ARCHITECTURE.md §15): what a browser that navigates to a paid `GET /api/query`
 * or `GET /api/table/{name}` is shown instead of the 402's JSON — the price in words, the same
 * checkout as the dashboards (panel.ts) with the request's SQL and format, its quote already shown
 * (this 402's offers), and the x402 details a
 * programmatic client reads from the PAYMENT-REQUIRED header, which the response carries as always.
 * Styles are inlined and the script is the server's own (CHECKOUT_SCRIPT_PATH): the page loads
 * nothing from another origin.
 */
import { escapeHtml } from "../dashboards/html.ts";
import { renderPage } from "../dashboards/layout.ts";
import styleSheet from "../dashboards/style.css" with { type: "text" };
import type { PaymentRequiredBody } from "../payment/pricing.ts";
import { CHECKOUT_SCRIPT_PATH } from "./bundle.ts";
import { renderCheckout } from "./panel.ts";
import type { CheckoutSetup } from "./setup-types.ts";

export function renderPaywallPage(body: PaymentRequiredBody, setup: CheckoutSetup): string {
  const what =
    setup.kind === "query"
      ? `This query's result is sold through <a href="https://www.x402.org/">x402</a>: pay for it with the wallet in your browser and the file downloads.`
      : `The description of table <code>${escapeHtml(setup.table)}</code> is sold through <a href="https://www.x402.org/">x402</a>: pay for it with the wallet in your browser and it downloads as JSON.`;
  return renderPage({
    title: "Payment required · arrow402",
    styles: `<style>\n${styleSheet}</style>`,
    header: `<p class="brand"><a href="/">arrow402</a></p>
<h1>Payment required</h1>
<p class="lede">${what}</p>`,
    main: `${renderCheckout({ ...setup, quote: body }, { headingLevel: 2, noScript: "An x402 client (such as arrow402 query) pays from a terminal: the offers are in this response's PAYMENT-REQUIRED header." })}
<section aria-labelledby="x402-heading">
<h2 id="x402-heading">For programs</h2>
<p>${escapeHtml(body.error)}</p>
<p class="muted">This page is the HTTP 402 answer shown to a browser. Any other client (one whose <code>Accept</code> does not prefer <code>text/html</code>) gets the x402 V2 JSON, and every client gets it base64-encoded in the <code>PAYMENT-REQUIRED</code> header; an x402 client such as <code>arrow402 query</code> signs one of its offers and sends the request again with <code>PAYMENT-SIGNATURE</code>.</p>
</section>`,
    footer: `<p>Served by arrow402.</p>`,
    scripts: `<script type="module" src="${CHECKOUT_SCRIPT_PATH}"></script>`,
  });
}
