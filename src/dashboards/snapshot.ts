/**
 * The data a scaffolded dashboard charts: a capped sample of its table taken at generation time,
 * stored beside the page as `snapshot.arrow` so that viewing it needs neither the database nor the
 * network (ARCHITECTURE.md §7). The table's engine takes the sample (TableEngine `sample`: any
 * engine, DESIGN.md §14): a table larger than the cap is sampled evenly along its time column (or
 * its own order), first and last rows included, so the charts cover the table's whole time range;
 * the sample is stored most recent first.
 */
import { tableFromIPC, tableToIPC } from "apache-arrow";
import { encodeRowsToIpc } from "../arrow/encode.ts";
import type { ColumnInfo, TableInfo } from "../catalog.ts";
import type { TableEngine } from "../engines/engine.ts";
import { isTimeKind, timeSpanOf, type TimeSpan } from "./time-values.ts";

export const SNAPSHOT_ROW_CAP = 5000;

export interface Snapshot {
  columns: ColumnInfo[];
  /** The sampled values, in column order, as the engine reads them (TableEngine `sample`). */
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

export async function takeSnapshot(engine: TableEngine, table: TableInfo, cap = SNAPSHOT_ROW_CAP, now = new Date()): Promise<Snapshot> {
  const time = timeColumnOf(table);
  const { rows, totalRows, sampled } = await engine.sample(table, cap, time?.name ?? null);
  // Every value fits its column (the engine checked it): the columns' full types, decimals' scales, lists' elements and structs' members included.
  const stream = encodeRowsToIpc(
    table.columns.map(({ name, kind, precision, scale, child, fields, nullable }) => ({ name, kind, precision, scale, child, fields, nullable })),
    rows,
  );
  const arrow = tableToIPC(tableFromIPC(stream), "file");
  const timeIndex = time ? table.columns.indexOf(time) : -1;
  const span = time ? timeSpanOf(time.kind, rows.map((row) => row[timeIndex])) ?? undefined : undefined;
  return { columns: table.columns, rows, totalRows, sampled, orderedBy: time?.name, span, takenAt: now, arrow };
}
