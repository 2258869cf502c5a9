/** Small statistics for the benchmark: medians of runs, percentiles of latencies. */

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Milliseconds taken by `action`, after a full collection so earlier garbage does not count. */
export async function timed<T>(action: () => T | Promise<T>): Promise<{ ms: number; value: T }> {
  Bun.gc(true);
  const start = performance.now();
  const value = await action();
  return { ms: performance.now() - start, value };
}

export const MB = 1_000_000;
