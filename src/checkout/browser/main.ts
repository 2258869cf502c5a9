/**
 * Entry point of the checkout bundle (`checkout.js`, ARCHITECTURE.md §15): wires the "Buy here"
 * controls panel.ts writes — the SQL, the format, Get a quote, Connect wallet, Pay and download —
 * to the quote, the wallet and the paid request, and shows the quote, the receipt or, in words,
 * why a purchase stopped. Used by the dashboards and by the server's paywall page alike.
 */
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import type { CheckoutSetup } from "../setup-types.ts";
import { fileNameFor, save } from "./download.ts";
import { readQuote, stillOffered, type OfferView, type Quote } from "./offers.ts";
import { payAndFetch, requestQuote, type Answer } from "./purchase.ts";
import { currentAccount, ensureChain, findWallets, requestAccount, walletErrorCode, walletSigner, type FoundWallet } from "./wallet.ts";
import { renderFree, renderQuote, renderReceipt, text } from "./view.ts";
import { WORDS } from "./words.ts";

interface Connected {
  wallet: FoundWallet;
  address: `0x${string}`;
}

function element<T extends HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}

function start(root: HTMLElement, setup: CheckoutSetup): void {
  const sqlInput = element<HTMLTextAreaElement>("checkout-sql");
  const formatSelect = element<HTMLSelectElement>("checkout-format");
  const quoteButton = element<HTMLButtonElement>("checkout-quote")!;
  const connectButton = element<HTMLButtonElement>("checkout-connect")!;
  const payButton = element<HTMLButtonElement>("checkout-pay")!;
  const offerBox = element<HTMLElement>("checkout-offer")!;
  const walletLine = element<HTMLElement>("checkout-wallet")!;
  const message = element<HTMLElement>("checkout-message")!;
  const receiptBox = element<HTMLElement>("checkout-receipt")!;
  const walletChoice = element<HTMLSelectElement>("checkout-wallet-choice");

  let quote: Quote | null = null;
  /** The data of a free request, got with the quote. */
  let free: Blob | null = null;
  let quotedSql = "";
  let quotedFormat = setup.format;
  let connected: Connected | null = null;
  let busy = false;

  const sql = () => (setup.kind === "query" ? (sqlInput?.value ?? setup.sql) : "");
  const format = () => formatSelect?.value ?? setup.format;
  const extension = () => setup.formats.find((f) => f.name === format())?.extension ?? "bin";
  const fileName = () => fileNameFor(setup.table, setup.kind === "query" ? sql() : "", extension(), setup.kind === "table" ? "-table" : "");

  function say(words: string, isError = false): void {
    message.textContent = words;
    message.classList.toggle("error", isError);
  }

  function update(): void {
    quoteButton.disabled = busy;
    connectButton.disabled = busy;
    payButton.disabled = busy || (quote === null && free === null);
    root.setAttribute("aria-busy", String(busy));
  }

  function chosen(): OfferView | undefined {
    if (!quote) return undefined;
    const picked = offerBox.querySelector<HTMLInputElement>('input[name="checkout-offer"]:checked');
    return quote.offers[picked ? Number(picked.value) : 0];
  }

  function showQuote(next: Quote, prefer?: PaymentRequirements): void {
    quote = next;
    free = null;
    renderQuote(offerBox, next, prefer);
    if (next.offers.length === 0) say("The server offers no payment this page can make (no EVM offer).", true);
  }

  function showFree(body: Blob): void {
    quote = null;
    free = body;
    renderFree(offerBox, body.size);
  }

  async function run(task: () => Promise<void>): Promise<void> {
    if (busy) return;
    busy = true;
    update();
    try {
      await task();
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      say(error instanceof TypeError ? WORDS.network(detail) : detail, true);
      console.warn(error);
    } finally {
      busy = false;
      update();
    }
  }

  async function getQuote(): Promise<void> {
    receiptBox.hidden = true;
    say("Asking the server for a quote…");
    quotedSql = sql();
    quotedFormat = format();
    const answer = await requestQuote(setup, quotedSql, quotedFormat);
    if (answer.kind === "payment-required") {
      showQuote(readQuote(setup.tokens, answer.required));
      say(connected ? "Press Pay and download to sign the payment in your wallet." : "Connect your wallet, then press Pay and download.");
    } else if (answer.kind === "data") {
      showFree(answer.body);
      say("Press Pay and download to save the file.");
    } else {
      quote = null;
      free = null;
      offerBox.hidden = true;
      say(WORDS.quoteFailed(answer.status, answer.message), true);
    }
  }

  /** With several wallets in the browser (EIP-6963), the buyer picks the one to pay with. */
  function offerWalletChoice(wallets: FoundWallet[]): void {
    const box = element<HTMLElement>("checkout-wallets");
    if (!box || !walletChoice || wallets.length < 2 || walletChoice.options.length === wallets.length) return;
    const selected = walletChoice.value;
    walletChoice.replaceChildren(...wallets.map((w, i) => Object.assign(document.createElement("option"), { value: String(i), textContent: w.name })));
    if (selected !== "") walletChoice.value = selected;
    box.hidden = false;
  }

  function showConnected(wallet: FoundWallet, address: `0x${string}`): Connected {
    connected = { wallet, address };
    walletLine.replaceChildren(`Connected with ${wallet.name}: `, text("code", address));
    walletLine.hidden = false;
    return connected;
  }

  async function connect(): Promise<Connected | null> {
    const wallets = await findWallets();
    offerWalletChoice(wallets);
    const wallet = wallets[walletChoice && !walletChoice.closest("[hidden]") ? Number(walletChoice.value) : 0];
    if (!wallet) {
      say(WORDS.noWallet(chosen()), true);
      return null;
    }
    try {
      return showConnected(wallet, await requestAccount(wallet.provider));
    } catch (error) {
      say(walletErrorCode(error) === 4001 ? WORDS.connectRefused : WORDS.connectFailed(error instanceof Error ? error.message : String(error)), true);
      return null;
    }
  }

  async function pay(): Promise<void> {
    receiptBox.hidden = true;
    if (setup.kind === "query" && sql() !== quotedSql) {
      say(WORDS.sqlChanged, true);
      return;
    }
    if (free) {
      // The free answer came in the format of the quote.
      if (format() !== quotedFormat) {
        say(WORDS.formatChanged, true);
        return;
      }
      const name = fileName();
      renderReceipt(receiptBox, { body: free, receipt: null }, undefined, name, save(free, name));
      say(`Saved ${name}.`);
      return;
    }
    const offer = chosen();
    if (!quote || !offer) return;
    const wallet = connected ?? (await connect());
    if (!wallet) return;
    // The buyer may have changed accounts in the wallet since connecting: sign with the current one.
    const current = await currentAccount(wallet.wallet.provider);
    if (current !== null && current.toLowerCase() !== wallet.address.toLowerCase()) showConnected(wallet.wallet, current);
    say(`Switching your wallet to ${offer.network} if needed…`);
    try {
      await ensureChain(wallet.wallet.provider, offer.chainId);
    } catch (error) {
      const code = walletErrorCode(error);
      say(code === 4902 ? WORDS.unknownChain(offer) : WORDS.switchRefused(offer), true);
      return;
    }
    say(`Sign the payment of ${offer.price} in your wallet…`);
    let answer: Answer;
    try {
      answer = await payAndFetch(setup, quotedSql, format(), quote.required, offer.requirement, walletSigner(wallet.wallet.provider, connected!.address));
    } catch (error) {
      if (error instanceof TypeError) throw error;
      const detail = error instanceof Error ? error.message : String(error);
      say(walletErrorCode(error) === 4001 ? WORDS.signRefused : WORDS.signFailed(detail), true);
      return;
    }
    if (answer.kind === "data") {
      const name = fileName();
      const url = save(answer.body, name);
      renderReceipt(receiptBox, answer, offer, name, url);
      // A quote buys once: another click must not pay again for the same file without a new quote.
      quote = null;
      say(`Paid and saved ${name}. To buy again, get a new quote.`);
      return;
    }
    if (answer.kind === "refused") {
      say(WORDS.serverRefused(answer.status, answer.message), true);
      return;
    }
    if (/insufficient[ _-]?(funds|balance)/i.test(answer.error)) {
      say(WORDS.insufficient(offer, wallet.address, answer.error), true);
      return;
    }
    if (!stillOffered(answer.required, offer.requirement)) {
      const next = readQuote(setup.tokens, answer.required);
      showQuote(next, offer.requirement);
      say(WORDS.priceChanged(offer, next.offers.find((o) => o.requirement.network === offer.requirement.network && o.requirement.payTo === offer.requirement.payTo) ?? next.offers[0], next.rows), true);
      return;
    }
    say(WORDS.paymentRefused(answer.error), true);
  }

  // The paywall page is the 402 itself: its offers are the quote.
  if (setup.quote !== undefined) {
    quotedSql = setup.kind === "query" ? setup.sql : "";
    showQuote(readQuote(setup.tokens, setup.quote as PaymentRequired));
    say("Connect your wallet, then press Pay and download.");
  }
  quoteButton.addEventListener("click", () => void run(getQuote));
  connectButton.addEventListener("click", () =>
    void run(async () => {
      if (await connect()) say(quote ? "Press Pay and download to sign the payment in your wallet." : "Connected. Press Get a quote.");
    }),
  );
  payButton.addEventListener("click", () => void run(pay));
  // Say at once, not only on a click, when there is no wallet to pay with.
  void findWallets(300).then((wallets) => {
    offerWalletChoice(wallets);
    if (wallets.length === 0 && !connected) {
      walletLine.textContent = WORDS.noWallet(undefined);
      walletLine.hidden = false;
    }
  });
  // Another wallet chosen: the next payment connects it.
  walletChoice?.addEventListener("change", () => {
    connected = null;
    walletLine.hidden = true;
  });
  sqlInput?.addEventListener("input", () => {
    if (quote && sql() !== quotedSql) say(WORDS.sqlChanged);
  });
  update();
}

const root = document.getElementById("checkout");
const setupElement = document.getElementById("checkout-setup");
if (root && setupElement?.textContent) {
  start(root, JSON.parse(setupElement.textContent) as CheckoutSetup);
}
