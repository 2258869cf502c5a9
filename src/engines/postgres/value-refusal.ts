/**
 * A PostgreSQL value its column's type cannot represent (±infinity, NaN, a timestamp past int64 µs,
 * a numeric wider than its Decimal128, a multi-dimensional array…) is refused, never changed
 * (DESIGN.md §14, ARCHITECTURE.md §5). The decoder throws `PgValueRefused`, a `ValueDoesNotFit` of
 * the Arrow encoder (same column and row positions), so the engine reports it as the encoder's
 * misfits are reported: `ValueDoesNotFitError`, the value itself only in the operator's detail.
 */
import { ValueDoesNotFit } from "../../arrow/columns.ts";

/** Thrown by a value decoder; the stream decoder adds the column and the row. */
export class Refusal extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "Refusal";
  }
}

export class PgValueRefused extends ValueDoesNotFit {
  constructor(
    columnIndex: number,
    rowIndex: number,
    /** The column's name in the COPY's select list. */
    readonly column: string,
    detail: string,
  ) {
    super(columnIndex, rowIndex, detail);
    this.name = "PgValueRefused";
    this.message = `the value at row ${rowIndex} of column '${column}' cannot be represented in its column's type: ${detail}`;
  }
}
