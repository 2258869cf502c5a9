/**
 * The oracle's own answer to "which tables does this SQL read?" (oracle.ts: no paid rows without a
 * settlement), independent of the server's parser and allow-list.
 */
import { Database } from "bun:sqlite";

/**
 * Which tables a query reads, by asking SQLite itself (`EXPLAIN` lists the b-trees it opens, views
 * resolved to their tables): the oracle for "no paid data without payment" does not trust the
 * server's own parser.
 */
export class TableReads {
  private readonly db: Database;
  private readonly byRootPage = new Map<number, string>();

  constructor(databasePath: string) {
    this.db = new Database(databasePath, { readonly: true });
    for (const row of this.db.query<{ tbl_name: string; rootpage: number }, []>("SELECT tbl_name, rootpage FROM sqlite_schema WHERE rootpage > 0").all()) {
      this.byRootPage.set(row.rootpage, row.tbl_name);
    }
  }

  /** The tables `sql` reads, or null when SQLite cannot prepare it. */
  of(sql: string): Set<string> | null {
    try {
      const program = this.db.query<{ opcode: string; p2: number }, []>(`EXPLAIN ${sql}`).all();
      const tables = new Set<string>();
      for (const step of program) {
        if (step.opcode === "OpenRead") tables.add(this.byRootPage.get(step.p2) ?? `rootpage ${step.p2}`);
      }
      return tables;
    } catch {
      return null;
    }
  }

  close(): void {
    this.db.close();
  }
}
