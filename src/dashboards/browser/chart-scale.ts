/**
 * Shared by the chart drawers: compact tick labels (1.2M, not 1,200,000, so axes fit a phone),
 * and counts and sums scaled from the sample to the whole table.
 */
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
const plain = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4 });
const exact = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 6 });

export function formatCompact(value: number): string {
  // Compact notation rounds 0.001 to "0"; small values keep their significant digits.
  return Math.abs(value) < 1 ? plain.format(value) : compact.format(value);
}

/** A value written beside its bar: as in the table up to 6 significant digits, compact from a million. */
export function formatValue(value: number): string {
  return Math.abs(value) >= 1_000_000 ? compact.format(value) : exact.format(value);
}

/** Rows per sampled row; counts and sums of a sample times this estimate the whole table. */
export interface Estimate {
  scale: number;
}

/** Plot reducers (reduceIndex) that scale the sample's count or sum up to the whole table. */
export function scaledCount({ scale }: Estimate) {
  return { reduceIndex: (index: number[]) => index.length * scale };
}

export function scaledSum({ scale }: Estimate) {
  return {
    reduceIndex: (index: number[], values: number[]) => {
      let total = 0;
      for (const i of index) total += values[i] ?? 0;
      return total * scale;
    },
  };
}

export function rowsLabel({ scale }: Estimate): string {
  return scale > 1 ? "Rows (estimated)" : "Rows";
}

/** "; estimated from a 1-in-50 sample", or nothing for the whole table. */
export function estimateNote({ scale }: Estimate): string {
  return scale > 1 ? `; estimated from a 1-in-${Math.round(scale).toLocaleString("en-US")} sample` : "";
}
