/**
 * What `arrow402 payments` prints (DESIGN.md §1): the settled payments from the ledger and the
 * totals per table and token, amounts in exact human units ("0.004 USDC").
 */
import type { TokenInfo } from "../config/types.ts";
import { formatAmount } from "../config/amounts.ts";
import type { Ledger } from "./ledger.ts";

export interface PaymentsReportOptions {
  since?: Date;
  /** Configured tokens, to show decimals and symbols; an unknown token is shown in smallest units. */
  tokens: Record<string, TokenInfo>;
}

export function formatPaymentsReport(ledger: Ledger, opts: PaymentsReportOptions): string {
  const entries = ledger.list({ since: opts.since });
  const scope = opts.since === undefined ? "" : ` since ${opts.since.toISOString()}`;
  if (entries.length === 0) return `No settled payments${scope} in ${ledger.path}.\n`;

  const tokenFor = tokenLookup(opts.tokens);
  const money = (amount: bigint, network: string, asset: string) => {
    const token = tokenFor(network, asset);
    return token === undefined
      ? `${amount} units of ${asset} on ${network}`
      : `${formatAmount(amount, token.decimals)} ${token.symbol} on ${token.networkLabel}`;
  };

  const lines = [`Settled payments${scope} (${entries.length}):`];
  for (const entry of entries) {
    const what = entry.query === null ? "metadata" : `${entry.rows ?? "?"} rows`;
    lines.push(
      `${entry.settledAt.toISOString()}  ${entry.tableName}  ${what}  ${money(entry.amount, entry.network, entry.asset)}`,
      `    payer ${entry.payer}  pay to ${entry.payTo}  tx ${entry.transaction}`,
      `    ${entry.resourceUrl}`,
    );
  }
  lines.push("", "Totals per table and token:");
  for (const total of ledger.totals({ since: opts.since })) {
    const count = total.payments === 1 ? "1 payment" : `${total.payments} payments`;
    lines.push(`  ${total.tableName}  ${money(total.amount, total.network, total.asset)}  (${count})`);
  }
  return lines.join("\n") + "\n";
}

function tokenLookup(tokens: Record<string, TokenInfo>) {
  const byAsset = new Map(Object.values(tokens).map((t) => [`${t.network}|${t.address.toLowerCase()}`, t]));
  return (network: string, asset: string) => byAsset.get(`${network}|${asset.toLowerCase()}`);
}
