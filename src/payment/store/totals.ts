/**
 * Settled totals per table, network and asset, the same for every store: an asset's address is
 * compared without case (a checksummed and a lower-case spelling are one token) and shown in its
 * smallest spelling; totals are sorted by table, then network, then asset.
 */
import type { PaymentTotal } from "../store.ts";

export function assetKey(asset: string): string {
  return asset.toLowerCase();
}

/** Adds up settled records (for a store that cannot sum uint256 amounts itself). */
export function sumTotals(records: Iterable<{ tableName: string; network: string; asset: string; amount: bigint }>): PaymentTotal[] {
  const totals = new Map<string, PaymentTotal>();
  for (const record of records) {
    const key = [record.tableName, record.network, assetKey(record.asset)].join("\u0000");
    const total = totals.get(key);
    if (total === undefined) {
      totals.set(key, { tableName: record.tableName, network: record.network, asset: record.asset, payments: 1, amount: record.amount });
    } else {
      total.payments += 1;
      total.amount += record.amount;
      if (record.asset < total.asset) total.asset = record.asset;
    }
  }
  return sortTotals([...totals.values()]);
}

export function sortTotals(totals: PaymentTotal[]): PaymentTotal[] {
  const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return totals.sort(
    (a, b) => byCodePoint(a.tableName, b.tableName) || byCodePoint(a.network, b.network) || byCodePoint(assetKey(a.asset), assetKey(b.asset)),
  );
}
