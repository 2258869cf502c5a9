/**
 * `arrow402 validate`'s read of a SQLite table (TableEngine `scan`, ARCHITECTURE.md §1, §5): every
 * stored value against its column's Arrow type, read with exact 64-bit integers as the encoder
 * sees them, so a value that would fail a query at run time is found ahead, with its rowid.
 */
import { Database } from "bun:sqlite";
import { fitProblem } from "../../arrow/encode.ts";
import type { TableInfo } from "../../catalog.ts";
import type { StoredMisfit } from "../engine.ts";
import { quoteIdentifier } from "./sample.ts";

export function scanSqliteTable(path: string, table: TableInfo, misfit: (found: StoredMisfit) => void): { rows: number } {
  // safeIntegers: integers beyond 2^53 are checked exactly, as the encoder sees them.
  const db = new Database(path, { readonly: true, safeIntegers: true });
  try {
    const columns = table.columns;
    // Rows are read one at a time (iterate: the table is never held whole), as records: each value
    // under a key of ours, whatever the columns are called. Identifiers come from the catalog.
    const keys = columns.map((_, c) => `c${c}`);
    const selected = columns.map((column, c) => `${quoteIdentifier(column.name)} AS ${keys[c]}`);
    if (table.hasRowid) selected.unshift("_rowid_ AS r");
    const statement = db.prepare(`SELECT ${selected.join(", ")} FROM ${quoteIdentifier(table.name)}`);
    let rows = 0;
    for (const row of statement.iterate() as IterableIterator<Record<string, unknown>>) {
      rows++;
      for (let c = 0; c < columns.length; c++) {
        const detail = fitProblem(columns[c]!, row[keys[c]!]);
        if (detail !== null) misfit({ column: c, row: table.hasRowid ? `rowid ${row.r}` : `row ${rows}`, detail });
      }
    }
    statement.finalize();
    return { rows };
  } finally {
    db.close();
  }
}
