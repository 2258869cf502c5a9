/**
 * What the checkout tells the buyer when something stops a purchase (ARCHITECTURE.md §15, §8):
 * what happened, that nothing was charged, and what to do. The server's own sentence follows
 * where it says more.
 */
import type { OfferView } from "./offers.ts";

const NOTHING = "Nothing was charged.";

export const WORDS = {
  noWallet: (offer: OfferView | undefined) =>
    `No wallet was found in this browser. Install a wallet extension (MetaMask, Coinbase Wallet or Rabby, for example)${
      offer ? `, hold ${offer.token?.symbol ?? "the token"} on ${offer.network} in it` : ""
    }, then reload this page. The arrow402 client (arrow402 query) buys the same data from a terminal.`,
  connectRefused: `You declined to connect your wallet. ${NOTHING} Press Connect wallet to try again.`,
  connectFailed: (message: string) => `Your wallet could not connect: ${message} ${NOTHING}`,
  switchRefused: (offer: OfferView) =>
    `Your wallet did not switch to ${offer.network} (chain ${offer.chainId}), where this offer is paid: nothing was signed. ${NOTHING} Switch your wallet to ${offer.network}, then press Pay and download again.`,
  unknownChain: (offer: OfferView) =>
    `Your wallet does not know ${offer.network} (chain ${offer.chainId}): add that network to your wallet, then press Pay and download again. ${NOTHING}`,
  signRefused: `You declined the signature in your wallet: nothing was signed. ${NOTHING}`,
  signFailed: (message: string) => `Your wallet could not sign the payment: ${message} ${NOTHING}`,
  insufficient: (offer: OfferView, address: string, server: string) =>
    `Your wallet ${address} holds too little ${offer.token?.symbol ?? "of the token"} on ${offer.network} to pay ${offer.price}. ${NOTHING} Add funds to that wallet and press Pay and download again.${server ? ` (The server said: ${server})` : ""}`,
  priceChanged: (before: OfferView, after: OfferView | undefined, rows: string | null) =>
    `The price changed since your quote (it was ${before.price}; it is now ${after ? after.price : "different"}${rows ? ` for ${rows}` : ""}), so the payment was not taken. ${NOTHING} The new quote is shown: press Pay and download to accept it.`,
  paymentRefused: (server: string) => `The payment was refused. ${NOTHING} ${server}`.trim(),
  serverRefused: (status: number, server: string) => `The server answered ${status}: ${server} ${NOTHING}`,
  quoteFailed: (status: number, server: string) => `No quote: the server answered ${status}: ${server}`,
  network: (message: string) => `The server could not be reached (${message}). ${NOTHING} Check your connection and try again.`,
  sqlChanged: "The SQL changed since the quote: press Get a quote for its price.",
  formatChanged: "The format changed since this free answer was fetched: press Get a quote to fetch it in the new format.",
} as const;
