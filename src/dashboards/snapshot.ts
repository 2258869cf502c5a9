/**
 * The data a scaffolded dashboard charts: a capped sample of its table taken at generation time,
 * stored beside the page as `snapshot.arrow` so that viewing it needs neither the database nor the
 * network (ARCHITECTURE.md §7). A table larger than the cap is sampled evenly along its time column (or
 * its rowid), first and last rows included, so the charts cover the table's whole time range; the
 * sample is stored most recent first.
 */
import type { Database } from "bun:sqlite";
import { tableFromIPC, tableToIPC } from "apache-arrow";
import { encodeRowsToIpc, ValueDoesNotFit } from "../arrow/encode.ts";
import type { ColumnInfo, TableInfo } from "../engines/sqlite/catalog.ts";
import { ValueDoesNotFitError } from "../errors.ts";
import { isTimeKind, timeSpanOf, type TimeSpan } from "./time-values.ts";

export const SNAPSHOT_ROW_CAP = 5000;

export interface Snapshot {
  columns: ColumnInfo[];
  /** Raw SQLite values, in column order. */
  rows: unknown[][];
  /** Rows in the whole table when the snapshot was taken. */
  totalRows: number;
  /** True when `rows` is an evenly spaced sample rather than the whole table. */
  sampled: boolean;
  /** The time column the sample is spread along (and stored most recent first by), if any. */
  orderedBy?: string;
  /** The times the sample covers, when there is a time column with readable values. */
  span?: TimeSpan;
  takenAt: Date;
  /** Arrow IPC file format: `.arrow` is the file format's extension. */
  arrow: Uint8Array;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function timeColumnOf(table: TableInfo): ColumnInfo | undefined {
  return table.columns.find((c) => isTimeKind(c.kind));
}

/** 1-based positions of `cap` rows spread evenly over `total`, the first and the last included. */
export function evenPositions(total: number, cap: number): number[] {
  if (cap >= total) return Array.from({ length: total }, (_, i) => i + 1);
  if (cap <= 1) return cap === 1 ? [total] : [];
  return Array.from({ length: cap }, (_, i) => Math.round((i * (total - 1)) / (cap - 1)) + 1);
}

const POSITION = quoteIdentifier("arrow402 position");

/** SQL for the sample; `?1` (when not the whole table) is the JSON array of positions to keep. */
function sampleSql(table: TableInfo, whole: boolean, time: ColumnInfo | undefined): string {
  const from = quoteIdentifier(table.name);
  const columns = table.columns.map((c) => quoteIdentifier(c.name));
  const along = time ? quoteIdentifier(time.name) : table.hasRowid ? "_rowid_" : "";
  const numbered = (select: string) => `SELECT ${select}, row_number() OVER (${along ? `ORDER BY ${along}` : ""}) AS ${POSITION} FROM ${from}`;
  const kept = `${POSITION} IN (SELECT value FROM json_each(?1))`;
  if (!table.hasRowid) {
    // A view: number its rows, keep the chosen positions.
    const order = ` ORDER BY ${POSITION} ${time ? "DESC" : "ASC"}`;
    return whole ? `SELECT ${columns.join(", ")} FROM ${from}${time ? ` ORDER BY ${along} DESC` : ""}` : `SELECT ${columns.join(", ")} FROM (${numbered(columns.join(", "))}) WHERE ${kept}${order}`;
  }
  // The rowid rides along (last) only to name the row of a value that does not fit. Numbering
  // only the rowids, then reading the chosen rows by rowid, sorts far less than numbering whole rows.
  const order = time ? ` ORDER BY ${along} DESC, _rowid_ DESC` : " ORDER BY _rowid_";
  const where = whole ? "" : ` WHERE _rowid_ IN (SELECT r FROM (${numbered("_rowid_ AS r")}) WHERE ${kept})`;
  // Named apart: a column list with a repeated name (the rowid alias) is asking for trouble.
  return `SELECT ${columns.join(", ")}, _rowid_ AS ${quoteIdentifier("arrow402 rowid")} FROM ${from}${where}${order}`;
}

function selectSample(db: Database, table: TableInfo, total: number, cap: number, time: ColumnInfo | undefined): unknown[][] {
  const whole = total <= cap;
  const statement = db.query(sampleSql(table, whole, time));
  // Exact 64-bit integers, as the query endpoint reads them (ARCHITECTURE.md §5).
  statement.safeIntegers(true);
  return (whole ? statement.values() : statement.values(JSON.stringify(evenPositions(total, cap)))) as unknown[][];
}

export function takeSnapshot(db: Database, table: TableInfo, cap = SNAPSHOT_ROW_CAP, now = new Date()): Snapshot {
  const time = timeColumnOf(table);
  const count = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${quoteIdentifier(table.name)}`).get();
  const total = count?.n ?? 0;
  const selected = selectSample(db, table, total, cap, time);
  const rows = table.hasRowid ? selected.map((row) => row.slice(0, -1)) : selected;
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
  const timeIndex = time ? table.columns.indexOf(time) : -1;
  const span = time ? timeSpanOf(time.kind, rows.map((row) => row[timeIndex])) ?? undefined : undefined;
  return {
    columns: table.columns,
    rows,
    totalRows: Math.max(total, rows.length),
    sampled: rows.length < total,
    orderedBy: time?.name,
    span,
    takenAt: now,
    arrow,
  };
}
