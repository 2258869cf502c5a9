/**
 * The checkout's markup (ARCHITECTURE.md §15): real form controls with the accessible names the
 * bundle (browser/main.ts) and screen readers find them by — a `SQL` text area, a `Format` select,
 * the buttons Get a quote, Connect wallet and Pay and download, a `Wallet` select shown when the
 * browser has several wallets — and the live regions where the
 * quote, the wallet, the messages and the receipt appear. The setup travels as JSON in the page.
 * One checkout per page: the dashboards' "get the full data" panel and the paywall page.
 */
import { escapeHtml, jsonForScript } from "../dashboards/html.ts";
import type { CheckoutSetup } from "./setup-types.ts";

export interface CheckoutMarkupOptions {
  /** The heading's level: 3 inside a dashboard's panel, 2 on the paywall page. */
  headingLevel: 2 | 3;
  /** Where the buyer can go instead, said when the page has no JavaScript. */
  noScript: string;
}

function controls(setup: CheckoutSetup): string {
  if (setup.kind === "table") {
    return `<p>You are buying the description of table <code>${escapeHtml(setup.table)}</code> (its columns, their types and its prices) as JSON, from <code>${escapeHtml(setup.path)}</code>.</p>`;
  }
  const options = setup.formats.map(
    (f) => `<option value="${escapeHtml(f.name)}"${f.name === setup.format ? " selected" : ""}>${escapeHtml(f.label)}</option>`,
  );
  return `<div class="checkout-fields">
<label for="checkout-sql">SQL</label>
<textarea id="checkout-sql" name="sql" rows="3" spellcheck="false" autocomplete="off" autocapitalize="off">${escapeHtml(setup.sql)}</textarea>
<label for="checkout-format">Format</label>
<select id="checkout-format" name="format">
${options.join("\n")}
</select>
</div>`;
}

export function renderCheckout(setup: CheckoutSetup, options: CheckoutMarkupOptions): string {
  const h = `h${options.headingLevel}`;
  return `<section class="checkout" id="checkout" aria-labelledby="checkout-heading">
<${h} id="checkout-heading">Buy here</${h}>
<p class="muted">Pay with the wallet in your browser: get a quote, connect your wallet, and pay; the file downloads once the payment settles. A query that fails is never charged.</p>
<script type="application/json" id="checkout-setup">${jsonForScript(setup)}</script>
${controls(setup)}
<p id="checkout-wallets" class="checkout-wallets" hidden><label for="checkout-wallet-choice">Wallet</label> <select id="checkout-wallet-choice"></select></p>
<div class="checkout-actions">
<button type="button" id="checkout-quote">Get a quote</button>
<button type="button" id="checkout-connect">Connect wallet</button>
<button type="button" id="checkout-pay" disabled>Pay and download</button>
</div>
<div id="checkout-offer" class="checkout-offer" aria-live="polite" hidden></div>
<p id="checkout-wallet" class="checkout-wallet" hidden></p>
<p id="checkout-message" class="checkout-message" role="status" aria-live="polite"></p>
<div id="checkout-receipt" class="checkout-receipt" aria-live="polite" hidden></div>
<noscript><p class="status">Buying here needs JavaScript. ${options.noScript}</p></noscript>
</section>`;
}
