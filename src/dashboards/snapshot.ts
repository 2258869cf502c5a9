/**
 * The data a scaffolded dashboard charts: a capped sample of its table taken at generation time
 * (the most recent rows when the table has a time column, else the first rows), stored beside the
 * page as `snapshot.arrow` so that viewing it needs neither the database nor the network (DESIGN.md §7).
 */
import type { Database } from "bun:sqlite";
import { tableFromIPC, tableToIPC } from "apache-arrow";
import { encodeRowsToIpc, ValueDoesNotFit } from "../arrow/encode.ts";
import type { ColumnInfo, TableInfo } from "../db/catalog.ts";
import { ValueDoesNotFitError } from "../errors.ts";

export const SNAPSHOT_ROW_CAP = 5000;

export interface Snapshot {
  columns: ColumnInfo[];
  /** Raw SQLite values, in column order. */
  rows: unknown[][];
  /** Rows in the whole table when the snapshot was taken. */
  totalRows: number;
  /** The time column the sample is ordered by (most recent first), if any. */
  orderedBy?: string;
  takenAt: Date;
  /** Arrow IPC file format: `.arrow` is the file format's extension. */
  arrow: Uint8Array;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function timeColumnOf(table: TableInfo): ColumnInfo | undefined {
  return table.columns.find((c) => c.kind === "timestamp" || c.kind === "date32");
}

export function takeSnapshot(db: Database, table: TableInfo, cap = SNAPSHOT_ROW_CAP, now = new Date()): Snapshot {
  const from = quoteIdentifier(table.name);
  const time = timeColumnOf(table);
  // The rowid rides along (last) only to name the row of a value that does not fit.
  const select = [...table.columns.map((c) => quoteIdentifier(c.name)), ...(table.hasRowid ? ["_rowid_"] : [])];
  const order = time ? ` ORDER BY ${quoteIdentifier(time.name)} DESC` : "";
  const statement = db.query(`SELECT ${select.join(", ")} FROM ${from}${order} LIMIT ?1`);
  // Exact 64-bit integers, as the query endpoint reads them (DESIGN.md §5).
  statement.safeIntegers(true);
  const selected = statement.values(cap) as unknown[][];
  const rows = table.hasRowid ? selected.map((row) => row.slice(0, -1)) : selected;
  const count = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${from}`).get();
  let stream: Uint8Array;
  try {
    stream = encodeRowsToIpc(
      table.columns.map((c) => ({ name: c.name, kind: c.kind, nullable: c.nullable })),
      rows,
    );
  } catch (error) {
    if (!(error instanceof ValueDoesNotFit)) throw error;
    const rowid = table.hasRowid ? (selected[error.rowIndex]?.at(-1) as number | bigint | undefined) ?? null : null;
    throw new ValueDoesNotFitError(table.name, table.columns[error.columnIndex]?.name ?? "?", rowid, error.detail);
  }
  const arrow = tableToIPC(tableFromIPC(stream), "file");
  return { columns: table.columns, rows, totalRows: count?.n ?? rows.length, orderedBy: time?.name, takenAt: now, arrow };
}
