/**
 * Small results by query text, format and data version (ARCHITECTURE.md §11 "Hostile clients"):
 * a query sent again while the data is unchanged is answered with the bytes it was answered with,
 * without reading the file or encoding again. Agents repeat queries (retries, polling, several
 * steps asking the same question); a client repeating one query costs little more than the HTTP
 * exchange.
 *
 * The version is SQLite's `PRAGMA data_version` on a connection of the HTTP thread: it changes
 * whenever another connection has committed to the file. A result read by a worker is stored
 * under the version read before it started; it can only be newer than that version's data, and once a commit has happened no
 * later read of the version matches it.
 *
 * An entry also names the validated query it answers: a reload that changes a table validates the
 * text anew, so the old bytes (other columns, other types) no longer match. A query whose WHERE
 * calls a date/time function is never kept: its rows change with the clock, not only with the data.
 */
import type { OutputFormat } from "../formats/registry.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";

/** Results up to this size are kept (the small queries buyers repeat). */
export const RESULT_CACHE_ENTRY_BYTES = 64 * 1024;
/** All kept results together stay within this; the least recently used go first. */
export const RESULT_CACHE_BYTES = 16 * 1024 ** 2;

/**
 * What an entry costs beyond its result: its key (held as UTF-16, up to 2 bytes a character), the
 * validated query it keeps alive (its texts and tree, a few times the SQL), and the entry itself.
 * Counted, so that empty results of long texts (0 bytes each) cannot grow the cache without bound:
 * 15,000 of 15 KB texts held ~650 MB when only results were counted.
 */
export function entryOverhead(key: string): number {
  return 512 + 4 * key.length;
}

export interface CachedResult {
  complete: Uint8Array[];
  rows: number;
}

interface Entry {
  query: ValidatedQuery;
  version: bigint;
  bytes: Uint8Array;
  rows: number;
  /** Its result's bytes plus `entryOverhead`. */
  cost: number;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();
  private usedBytes = 0;

  constructor(
    private readonly maxBytes = RESULT_CACHE_BYTES,
    private readonly maxEntryBytes = RESULT_CACHE_ENTRY_BYTES,
  ) {}

  /** The result kept for this query and format at `version`, or null. */
  get(query: ValidatedQuery, format: OutputFormat, version: bigint | null): CachedResult | null {
    if (version === null || query.readsClock) return null;
    const key = keyOf(query, format);
    const entry = this.entries.get(key);
    if (entry === undefined || entry.version !== version || entry.query !== query) return null;
    // Map keeps insertion order: re-inserting marks it most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { complete: [entry.bytes], rows: entry.rows };
  }

  /**
   * Keeps a complete result read at `version` (if small enough) and returns it as one buffer, so
   * this response and later ones send the same bytes.
   */
  put(query: ValidatedQuery, format: OutputFormat, version: bigint | null, result: CachedResult): CachedResult {
    // A WHERE that reads the clock can select other rows a second later with the same data.
    if (version === null || query.readsClock) return result;
    const size = result.complete.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    if (size > this.maxEntryBytes) return result;
    const bytes = result.complete.length === 1 ? result.complete[0]! : joined(result.complete, size);
    const key = keyOf(query, format);
    this.drop(key);
    const cost = bytes.byteLength + entryOverhead(key);
    this.entries.set(key, { query, version, bytes, rows: result.rows, cost });
    this.usedBytes += cost;
    while (this.usedBytes > this.maxBytes) this.drop(this.entries.keys().next().value!);
    return { complete: [bytes], rows: result.rows };
  }

  /** Bytes held (results and what their entries cost), for operators and tests. */
  get bytes(): number {
    return this.usedBytes;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.usedBytes -= entry.cost;
  }
}

function keyOf(query: ValidatedQuery, format: OutputFormat): string {
  return `${format.name}\n${query.sql}`;
}

function joined(chunks: Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
