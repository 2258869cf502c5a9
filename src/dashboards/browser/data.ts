/**
 * Browser side: decodes `snapshot.arrow` into plain records for Plot and the preview table.
 * apache-arrow gives Int64 as bigint and timestamps/dates as epoch milliseconds (µs ones with a
 * fraction, which a double cannot always hold exactly) and a decimal as its raw words; charts need
 * numbers and Dates, the preview shows exact values: so a decimal is read as its unscaled bigint
 * and a Timestamp(µs) as its stored microseconds (formats/decimal.ts, DESIGN §16).
 */
import { DataType, tableFromIPC, type Decimal, type Vector } from "apache-arrow";
import { decimalText, unscaledAt } from "../../formats/decimal.ts";
import type { PlanColumn } from "../chart-plan.ts";

/** A decimal's exact value: shown as the database holds it, charted as the nearest double. */
export class DecimalCell {
  constructor(
    readonly unscaled: bigint,
    readonly scale: number,
  ) {}
  toString(): string {
    return decimalText(this.unscaled, this.scale);
  }
}

/** A Timestamp(µs): a Date (whole milliseconds) for the charts, with its exact microseconds for the preview. */
export class MicroDate extends Date {
  constructor(readonly micros: bigint) {
    // Floor, not truncation: 1 µs before 1970 is in the millisecond before it.
    super(Number(micros / 1000n - (micros % 1000n < 0n ? 1n : 0n)));
  }
}

export type Cell = string | number | bigint | boolean | Date | Uint8Array | DecimalCell | null;
export type Row = Record<string, Cell>;

type Kind = PlanColumn["kind"];

function toCell(value: unknown, kind: Kind): Cell {
  if (value === null || value === undefined) return null;
  if ((kind === "timestamp" || kind === "date32") && typeof value === "number") return new Date(value);
  if (typeof value === "bigint" || typeof value === "number" || typeof value === "string" || typeof value === "boolean") {
    return value;
  }
  if (value instanceof Uint8Array) return value;
  return String(value);
}

/** A list shown as text: `[1, null, "a"]`, its elements exact (it is never charted). */
function listText(list: Vector): string {
  const items: string[] = [];
  for (let j = 0; j < list.length; j++) items.push(nestedText(list, j));
  return `[${items.join(", ")}]`;
}

/** A struct shown as text: `{"a": 1, "b": null}`, its members exact (it is never charted). */
function structText(struct: Vector, i: number): string {
  const members = struct.type.children.map((field: { name: string }, m: number) => `${JSON.stringify(field.name)}: ${nestedText(struct.getChildAt(m)!, i)}`);
  return `{${members.join(", ")}}`;
}

/** The text of value `j` of a list's elements or a struct's member. */
function nestedText(vector: Vector, j: number): string {
  if (!vector.isValid(j)) return "null";
  if (DataType.isStruct(vector.type)) return structText(vector, j);
  const item: unknown = vector.get(j);
  if (item === null || item === undefined) return "null";
  if (DataType.isList(vector.type)) return listText(item as Vector);
  if (DataType.isDecimal(vector.type)) return decimalText(unscaledAt(vector as Vector<Decimal>, j), vector.type.scale);
  if ((DataType.isTimestamp(vector.type) || DataType.isDate(vector.type)) && typeof item === "number") return new Date(item).toISOString();
  if (typeof item === "string") return JSON.stringify(item);
  if (item instanceof Uint8Array) return displayCell(item, "binary");
  return String(item);
}

/** How to read row `i` of one batch's column as a cell. */
function cellReader(vector: Vector | null, kind: Kind): (i: number) => Cell {
  if (vector === null) return () => null;
  switch (kind) {
    case "decimal128": {
      const scale = (vector.type as Decimal).scale;
      return (i) => (vector.isValid(i) ? new DecimalCell(unscaledAt(vector as Vector<Decimal>, i), scale) : null);
    }
    case "timestamp_us":
    case "timestamp_us_utc": {
      const micros = vector.data[0]!.values as BigInt64Array;
      return (i) => (vector.isValid(i) ? new MicroDate(micros[i]!) : null);
    }
    case "list":
      return (i) => {
        const list = vector.get(i) as Vector | null;
        return list === null ? null : listText(list);
      };
    case "struct":
      return (i) => (vector.isValid(i) ? structText(vector, i) : null);
    default:
      return (i) => toCell(vector.get(i), kind);
  }
}

export function decodeSnapshot(bytes: Uint8Array, columns: PlanColumn[]): Row[] {
  const table = tableFromIPC(bytes);
  const rows: Row[] = [];
  // Batch by batch: each column of a batch is one chunk, whose raw values are read by position.
  for (const batch of table.batches) {
    const readers = columns.map((c) => ({ name: c.name, read: cellReader(batch.getChild(c.name), c.kind) }));
    for (let i = 0; i < batch.numRows; i++) {
      const row: Row = {};
      for (const { name, read } of readers) row[name] = read(i);
      rows.push(row);
    }
  }
  return rows;
}

/** A number for Plot; bigints beyond 2^53 lose precision here, which a chart cannot show anyway. */
export function chartNumber(cell: Cell): number | null {
  if (typeof cell === "number") return Number.isFinite(cell) ? cell : null;
  if (typeof cell === "bigint") return Number(cell);
  if (typeof cell === "boolean") return cell ? 1 : 0;
  if (cell instanceof DecimalCell) return Number(cell.toString());
  return null;
}

/** "2024-01-02 03:04:05.123456Z" (with "Z" for an instant, without for a wall-clock time). */
function microsText(cell: MicroDate, kind: Kind): string {
  const fraction = ((cell.micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const seconds = cell.toISOString().slice(0, 19).replace("T", " ");
  const digits = fraction === 0n ? "" : `.${fraction.toString().padStart(6, "0")}`;
  return `${seconds}${digits}${kind === "timestamp_us" ? "" : "Z"}`;
}

export function displayCell(cell: Cell, kind: Kind): string {
  if (cell === null) return "null";
  if (cell instanceof MicroDate) return microsText(cell, kind);
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

/** Nulls last; numbers, bigints, decimals and dates by value; text in the reader's collation. */
export function compareCells(a: Cell, b: Cell): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (a instanceof MicroDate && b instanceof MicroDate) return a.micros < b.micros ? -1 : a.micros > b.micros ? 1 : 0;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  // One column, one scale: the unscaled values order the decimals.
  if (a instanceof DecimalCell && b instanceof DecimalCell) return a.unscaled < b.unscaled ? -1 : a.unscaled > b.unscaled ? 1 : 0;
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  return displayCell(a, "utf8").localeCompare(displayCell(b, "utf8"));
}
