/**
 * Row counts of per_row quotes by query text and data version (ARCHITECTURE.md §11 "Hostile clients"):
 * an unpaid quote must not rescan the table for a query already counted while the data is
 * unchanged, and concurrent quotes of one query share one count.
 *
 * The version is SQLite's `PRAGMA data_version` on one connection, which changes whenever another
 * connection commits to the file. It is read *before* the count starts: a count cached under
 * version V may come from a later snapshot only if a commit happened in between, and then every
 * later read of the version is past V, so that entry is never used.
 */
export class CountCache {
  private readonly entries = new Map<string, { version: number; count: Promise<number> }>();

  constructor(
    /** The current data version, or null when it cannot be read (a writer holds the file). */
    private readonly version: () => number | null,
    private readonly capacity = 1024,
  ) {}

  count(sql: string, compute: () => Promise<number>): Promise<number> {
    const version = this.version();
    if (version === null) return compute();
    const hit = this.entries.get(sql);
    if (hit !== undefined && hit.version === version) {
      // Map keeps insertion order: re-inserting marks it most recently used.
      this.entries.delete(sql);
      this.entries.set(sql, hit);
      return hit.count;
    }
    const count = compute();
    const entry = { version, count };
    this.entries.delete(sql);
    this.entries.set(sql, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    // A failed count (time limit, busy workers) is not remembered.
    count.catch(() => {
      if (this.entries.get(sql) === entry) this.entries.delete(sql);
    });
    return count;
  }
}
