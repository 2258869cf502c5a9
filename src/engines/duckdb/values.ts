/**
 * DuckDB's values (as @duckdb/node-api gives them) as the encoders take them (engine.ts
 * TableSample: int16/int32 numbers, int64 bigints, decimal128 the unscaled bigint, date32 days,
 * µs timestamps bigints, binary bytes, list arrays, struct objects of their members). A value the column's Arrow type cannot hold
 * exactly (a HUGEINT of 39 digits, DuckDB's ±infinity dates and timestamps) is refused, never
 * changed: ValueDoesNotFit.
 */
import type { DuckDBDataChunk } from "@duckdb/node-api";
import { ValueDoesNotFit } from "../../arrow/encode.ts";
import type { DuckColumnType } from "./types.ts";

/** DuckDB's infinite dates are these day numbers; its infinite timestamps int64's extremes. */
const DATE_INFINITY = 2 ** 31 - 1;
const TIMESTAMP_INFINITY = 2n ** 63n - 1n;

/** The refusal of a date (days since the epoch), or null: DuckDB's ±infinity dates have no Date32 value. */
export function dateMisfit(days: number): string | null {
  return Math.abs(days) >= DATE_INFINITY ? `the date ${days > 0 ? "" : "-"}infinity has no Date32 value` : null;
}

/** The refusal of DuckDB's infinite timestamp (int64's extremes), `positive` or not. */
export function timestampMisfit(positive: boolean): string {
  return `the timestamp ${positive ? "" : "-"}infinity has no Timestamp value`;
}

class Misfit {
  constructor(readonly detail: string) {}
}

function convert(type: DuckColumnType, value: unknown): unknown {
  if (value === null) return null;
  switch (type.kind) {
    case "int64":
      return typeof value === "bigint" ? value : BigInt(value as number);
    case "decimal128": {
      // A HUGEINT or UBIGINT may hold more digits than its Decimal128(38,0)/(20,0) (DECIMAL(p,s) never does).
      const unscaled = typeof value === "bigint" ? value : (value as { value: bigint }).value;
      const limit = 10n ** BigInt(type.precision!) - 1n;
      return unscaled > limit || unscaled < -limit
        ? new Misfit(`unscaled value ${unscaled} has more than ${type.precision} digits: it does not fit decimal(${type.precision},${type.scale})`)
        : unscaled;
    }
    case "date32": {
      const days = (value as { days: number }).days;
      const refused = dateMisfit(days);
      return refused === null ? days : new Misfit(refused);
    }
    case "timestamp_us":
    case "timestamp_us_utc": {
      const nanos = (value as { nanos?: bigint }).nanos;
      if (nanos !== undefined && nanos % 1000n !== 0n && nanos < TIMESTAMP_INFINITY && nanos > -TIMESTAMP_INFINITY) {
        return new Misfit(`the timestamp ${value} has a part finer than a microsecond, which Timestamp(µs) cannot hold`);
      }
      const micros = nanos === undefined ? (value as { micros: bigint }).micros : nanos >= TIMESTAMP_INFINITY || nanos <= -TIMESTAMP_INFINITY ? nanos : nanos / 1000n;
      return micros >= TIMESTAMP_INFINITY || micros <= -TIMESTAMP_INFINITY ? new Misfit(timestampMisfit(micros > 0n)) : micros;
    }
    case "binary":
      return (value as { bytes: Uint8Array }).bytes;
    case "list": {
      const items = (value as { items: readonly unknown[] }).items;
      const out = new Array<unknown>(items.length);
      for (let i = 0; i < items.length; i++) {
        const item = convert(type.child!, items[i]);
        if (item instanceof Misfit) return item;
        out[i] = item;
      }
      return out;
    }
    case "struct": {
      const entries = (value as { entries: Readonly<Record<string, unknown>> }).entries;
      const out: Record<string, unknown> = {};
      for (const field of type.fields!) {
        // A member the driver did not hand over is refused, never read as NULL.
        if (!Object.hasOwn(entries, field.name)) return new Misfit(`struct member '${field.name}': missing from DuckDB's value`);
        const member = convert(field.type, entries[field.name]);
        if (member instanceof Misfit) return new Misfit(`struct member '${field.name}': ${member.detail}`);
        // defineProperty: a member named __proto__ is a property like any other.
        Object.defineProperty(out, field.name, { value: member, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    default:
      // int16/int32/float32/float64 numbers, bool, utf8 strings (UUID and others are selected as VARCHAR).
      return value;
  }
}

/**
 * The chunk's rows, in the select list's order; `firstRowIndex` names a refused value's row in the
 * result. A refused value throws ValueDoesNotFit, unless `misfit` hears of it (a scan): then it is null.
 */
export function chunkRows(chunk: DuckDBDataChunk, types: readonly DuckColumnType[], firstRowIndex: number, misfit?: (refused: ValueDoesNotFit) => void): unknown[][] {
  const columns = chunk.getColumns();
  const count = chunk.rowCount;
  const rows: unknown[][] = new Array(count);
  for (let r = 0; r < count; r++) rows[r] = new Array(types.length);
  for (let c = 0; c < types.length; c++) {
    const type = types[c]!;
    const values = columns[c]!;
    for (let r = 0; r < count; r++) {
      const value = convert(type, values[r]);
      if (value instanceof Misfit) {
        const refused = new ValueDoesNotFit(c, firstRowIndex + r, value.detail);
        if (misfit === undefined) throw refused;
        misfit(refused);
        rows[r]![c] = null;
      } else rows[r]![c] = value;
    }
  }
  return rows;
}
