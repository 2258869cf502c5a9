/**
 * `--max-bytes`: how large an answer the buyer accepts, counted as sent and once decompressed
 * (DESIGN §17). A few compressed kilobytes can decompress to gigabytes, so the bound is on what
 * the client would have to hold or write, not on what crossed the network.
 */

/** The default bound: a generous answer for a terminal or a file; `--max-bytes` raises it. */
export const DEFAULT_MAX_BYTES = 1024 ** 3;

const UNITS: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** `1073741824`, `500MB`, `1.5GiB` (case-insensitive) as a whole number of bytes; null when malformed. */
export function parseByteSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (match === null) return null;
  const unit = UNITS[match[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) && bytes >= 1 ? bytes : null;
}

/** `1 GiB (1073741824 bytes)`, `64000 bytes`: the exact count, and a readable one when it is round. */
export function describeBytes(bytes: number): string {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit} (${bytes} bytes)`;
  }
  for (const [unit, size] of [["GB", 1e9], ["MB", 1e6], ["kB", 1e3]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}
