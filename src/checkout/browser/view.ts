/**
 * What the checkout shows (ARCHITECTURE.md §15): the quote (rows, what is sold, one radio button
 * per offer), a free answer, and the receipt (the amount, the full transaction hash as text, the
 * explorer link on the built-in networks, the payer, the file). Everything is built with DOM nodes
 * and textContent: nothing from the server is parsed as HTML.
 */
import type { PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { OfferView, Quote } from "./offers.ts";

export function text(tag: string, content: string, className?: string): HTMLElement {
  const node = document.createElement(tag);
  node.textContent = content;
  if (className) node.className = className;
  return node;
}

function definitions(pairs: [string, Node | string][]): HTMLDListElement {
  const list = document.createElement("dl");
  for (const [term, value] of pairs) {
    list.append(text("dt", term));
    const detail = document.createElement("dd");
    detail.append(value);
    list.append(detail);
  }
  return list;
}

/** The offer selected at first: the one on the network, token and recipient of `prefer` (the buyer's choice before a new quote), else the cheapest. */
function preferred(quote: Quote, prefer: PaymentRequirements | undefined): number {
  if (!prefer) return 0;
  const same = quote.offers.findIndex(
    (o) => o.requirement.network === prefer.network && o.requirement.asset === prefer.asset && o.requirement.payTo === prefer.payTo,
  );
  return same < 0 ? 0 : same;
}

export function renderQuote(box: HTMLElement, quote: Quote, prefer?: PaymentRequirements): void {
  const rows: [string, Node | string][] = [];
  if (quote.rows) rows.push(["Rows", quote.rows]);
  const what = quote.required.resource?.description?.replace(/ - (up to )?\d+ rows$/, "");
  if (what) rows.push(["For", what]);
  const list = document.createElement("fieldset");
  list.className = "checkout-offers";
  list.append(text("legend", quote.offers.length === 1 ? "Price" : "Prices (choose one)"));
  const selected = preferred(quote, prefer);
  quote.offers.forEach((offer, i) => {
    const label = document.createElement("label");
    const radio = document.createElement("input");
    radio.type = "radio";
    radio.name = "checkout-offer";
    radio.value = String(i);
    radio.checked = i === selected;
    label.append(radio, " ", text("strong", offer.price, "checkout-price"), ` on ${offer.network}, paid to `, text("code", offer.requirement.payTo));
    list.append(label);
  });
  box.replaceChildren(text("h4", "Quote"), definitions(rows), list);
  box.hidden = false;
}

export function renderFree(box: HTMLElement, bytes: number): void {
  box.replaceChildren(text("h4", "Quote"), text("p", `Free: this request needs no payment (${bytes.toLocaleString("en-US")} bytes).`));
  box.hidden = false;
}

/** The receipt of a paid download (`receipt` set) or the note of a free one. `url` saves the file again. */
export function renderReceipt(box: HTMLElement, answer: { body: Blob; receipt: SettleResponse | null }, offer: OfferView | undefined, name: string, url: string): void {
  const pairs: [string, Node | string][] = [];
  if (offer && answer.receipt) pairs.push(["Paid", `${offer.price} on ${offer.network} to ${offer.requirement.payTo}`]);
  if (answer.receipt) {
    const hash = answer.receipt.transaction;
    const cell = document.createElement("span");
    cell.append(text("code", hash, "checkout-tx"));
    const explorer = offer?.token?.explorerTx;
    if (explorer && /^0x[0-9a-fA-F]{64}$/.test(hash)) {
      const link = document.createElement("a");
      link.href = explorer + hash;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      link.textContent = "View on the block explorer";
      cell.append(" ", link);
    }
    pairs.push(["Transaction", cell]);
    if (answer.receipt.payer) pairs.push(["Payer", text("code", answer.receipt.payer)]);
  }
  const again = document.createElement("a");
  again.href = url;
  again.download = name;
  again.textContent = "Save again";
  const file = document.createElement("span");
  file.append(`${name} (${answer.body.size.toLocaleString("en-US")} bytes) `, again);
  pairs.push(["File", file]);
  box.replaceChildren(text("h4", answer.receipt ? "Receipt" : "Downloaded"), definitions(pairs));
  box.hidden = false;
}
