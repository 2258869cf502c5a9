/**
 * Browser side: decodes `snapshot.arrow` into plain records for Plot and the preview table.
 * apache-arrow gives Int64 as bigint and timestamps/dates as epoch milliseconds; charts need
 * numbers and Dates, the preview shows exact values.
 */
import { tableFromIPC } from "apache-arrow";
import type { PlanColumn } from "../chart-plan.ts";

export type Cell = string | number | bigint | boolean | Date | Uint8Array | null;
export type Row = Record<string, Cell>;

function toCell(value: unknown, kind: PlanColumn["kind"]): Cell {
  if (value === null || value === undefined) return null;
  if ((kind === "timestamp" || kind === "date32") && typeof value === "number") return new Date(value);
  if (typeof value === "bigint" || typeof value === "number" || typeof value === "string" || typeof value === "boolean") {
    return value;
  }
  if (value instanceof Uint8Array) return value;
  return String(value);
}

export function decodeSnapshot(bytes: Uint8Array, columns: PlanColumn[]): Row[] {
  const table = tableFromIPC(bytes);
  const vectors = columns.map((c) => ({ column: c, vector: table.getChild(c.name) }));
  const rows: Row[] = [];
  for (let i = 0; i < table.numRows; i++) {
    const row: Row = {};
    for (const { column, vector } of vectors) row[column.name] = toCell(vector?.get(i), column.kind);
    rows.push(row);
  }
  return rows;
}

/** A number for Plot; bigints beyond 2^53 lose precision here, which a chart cannot show anyway. */
export function chartNumber(cell: Cell): number | null {
  if (typeof cell === "number") return Number.isFinite(cell) ? cell : null;
  if (typeof cell === "bigint") return Number(cell);
  if (typeof cell === "boolean") return cell ? 1 : 0;
  return null;
}

export function displayCell(cell: Cell, kind: PlanColumn["kind"]): string {
  if (cell === null) return "null";
  if (cell instanceof Date) {
    const iso = cell.toISOString();
    return kind === "date32" ? iso.slice(0, 10) : iso.replace("T", " ").replace(/\.000Z$/, "Z");
  }
  if (cell instanceof Uint8Array) {
    const hex = Array.from(cell.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
    return `x'${hex}${cell.length > 16 ? "…" : ""}' (${cell.length} bytes)`;
  }
  return String(cell);
}

/** Nulls last; numbers, bigints and dates by value; text in the reader's collation. */
export function compareCells(a: Cell, b: Cell): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  return displayCell(a, "utf8").localeCompare(displayCell(b, "utf8"));
}
