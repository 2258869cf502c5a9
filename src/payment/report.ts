/**
 * What `arrow402 payments` prints (ARCHITECTURE.md §1): the settled payments from the payment store
 * (either store: the same report for a SQLite file and for PostgreSQL), each once, the totals per
 * table and token, amounts in exact human units ("0.004 USDC"), and the unconfirmed attempts.
 */
import type { TokenInfo } from "../config/types.ts";
import { formatAmount } from "../config/amounts.ts";
import type { ReconcileStep } from "./reconcile.ts";
import type { PaymentRecord, PaymentStore } from "./store.ts";
import { sumTotals } from "./store/totals.ts";

export interface PaymentsReportOptions {
  since?: Date;
  /** Configured tokens, to show decimals and symbols; an unknown token is shown in smallest units. */
  tokens: Record<string, TokenInfo>;
}

export async function formatPaymentsReport(store: PaymentStore, opts: PaymentsReportOptions): Promise<string> {
  // Other processes may settle payments while we read (replicas of a PostgreSQL store). Reading
  // the attempts first and the settled payments second, an attempt confirmed in between shows up
  // in both reads, never in neither; it is then listed once, as settled. The totals are summed
  // from the very list printed, so they always agree with it.
  const pending = await store.unconfirmed();
  const entries = await store.list({ since: opts.since });
  const settledKeys = new Set(entries.map((entry) => entry.paymentKey));
  const unconfirmed = pending.filter((entry) => !settledKeys.has(entry.paymentKey));
  const totals = sumTotals(entries);
  const scope = opts.since === undefined ? "" : ` since ${opts.since.toISOString()}`;
  const warning = unconfirmedSection(unconfirmed, opts.tokens);
  if (entries.length === 0) return `No settled payments${scope} in ${store.location}.\n${warning}`;

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
  for (const total of totals) {
    const count = total.payments === 1 ? "1 payment" : `${total.payments} payments`;
    lines.push(`  ${total.tableName}  ${money(total.amount, total.network, total.asset)}  (${count})`);
  }
  return lines.join("\n") + "\n" + warning;
}

/**
 * Settlements whose outcome is unknown: the facilitator was asked to settle and never answered, or
 * the server stopped before recording the answer. The money may have moved; the operator checks the
 * payer's authorization nonce on chain (EIP-3009 `authorizationState(payer, nonce)`).
 */
function unconfirmedSection(entries: PaymentRecord[], tokens: Record<string, TokenInfo>): string {
  if (entries.length === 0) return "";
  const tokenFor = tokenLookup(tokens);
  const lines = ["", `Unconfirmed settlements (${entries.length}): the outcome is unknown; check each authorization on chain:`];
  for (const entry of entries) {
    const token = tokenFor(entry.network, entry.asset);
    const amount = token ? `${formatAmount(entry.amount, token.decimals)} ${token.symbol}` : `${entry.amount} units of ${entry.asset}`;
    const [, , , nonce] = entry.paymentKey.split("|");
    lines.push(
      `${entry.settledAt.toISOString()}  ${entry.tableName}  ${amount} on ${entry.network}`,
      `    payer ${entry.payer}  nonce ${nonce}  pay to ${entry.payTo}`,
      `    ${entry.resourceUrl}`,
    );
  }
  return lines.join("\n") + "\n";
}

const OUTCOME_LABEL = { confirmed: "CONFIRMED", removed: "REMOVED", left: "LEFT", failed: "FAILED" } as const;

/** What `arrow402 payments --reconcile` prints: each attempt, what the chain said and what was done, then a summary. */
export function formatReconciliation(steps: ReconcileStep[], location: string, tokens: Record<string, TokenInfo>): string {
  if (steps.length === 0) return `No unconfirmed settlements in ${location}: nothing to reconcile.\n`;
  const tokenFor = tokenLookup(tokens);
  const lines = [`Reconciling ${steps.length} unconfirmed settlement${steps.length === 1 ? "" : "s"} in ${location} with the chain:`];
  for (const { record, outcome, detail } of steps) {
    const token = tokenFor(record.network, record.asset);
    const amount = token ? `${formatAmount(record.amount, token.decimals)} ${token.symbol}` : `${record.amount} units of ${record.asset}`;
    const [, , , nonce] = record.paymentKey.split("|");
    lines.push(
      `${OUTCOME_LABEL[outcome]}  ${record.tableName}  ${amount} on ${record.network}  attempted ${record.settledAt.toISOString()}`,
      `    payer ${record.payer}  nonce ${nonce}`,
      `    ${record.resourceUrl}`,
      `    ${detail}`,
    );
  }
  const count = (outcome: ReconcileStep["outcome"]) => steps.filter((step) => step.outcome === outcome).length;
  const summary = [`${count("confirmed")} confirmed settled`, `${count("removed")} removed`, `${count("left")} left unconfirmed`];
  if (count("failed") > 0) summary.push(`${count("failed")} failed`);
  lines.push("", `Done: ${summary.join(", ")}.`);
  return lines.join("\n") + "\n";
}

function tokenLookup(tokens: Record<string, TokenInfo>) {
  const byAsset = new Map(Object.values(tokens).map((t) => [`${t.network}|${t.address.toLowerCase()}`, t]));
  return (network: string, asset: string) => byAsset.get(`${network}|${asset.toLowerCase()}`);
}
