/**
 * What the server tells a checkout (ARCHITECTURE.md §15): written into the page as JSON by
 * panel.ts and read by the browser bundle (browser/main.ts). Plain data with no imports, so the
 * browser bundle takes only these types from the server's code.
 */

/** A format the buyer can choose; `label` is what the Format select shows. */
export interface CheckoutFormat {
  name: string;
  mediaType: string;
  extension: string;
  label: string;
}

/** A token an offer can be paid in, so that amounts are shown in token units rather than smallest units. */
export interface CheckoutToken {
  /** CAIP-2, `eip155:<chain id>`. */
  network: string;
  /** The token contract, checksummed. */
  asset: string;
  symbol: string;
  decimals: number;
  /** The network's name as the config labels it ("Base Sepolia", "devnet"). */
  networkLabel: string;
  /** Where a transaction of this network is shown: the URL with the hash appended; none for a private chain. */
  explorerTx?: string;
}

export interface CheckoutSetup {
  /**
   * `query`: SQL and format, bought from `GET /api/query`; `table`: the table's description, bought
   * from `path` (`GET /api/table/{name}`), always JSON.
   */
  kind: "query" | "table";
  /** The table the page is about: names the downloaded file. */
  table: string;
  /** The SQL to prefill (`query`). */
  sql: string;
  /** The path bought (`table`). */
  path: string;
  formats: CheckoutFormat[];
  /** The format selected at first. */
  format: string;
  tokens: CheckoutToken[];
  /** The 402 body (x402 PaymentRequired) of `sql` when the page is that 402 (the paywall): the quote shown at first. */
  quote?: unknown;
}
