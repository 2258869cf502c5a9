/**
 * Column buffers an engine builds itself, from its wire or its vectors (postgres/copy-arrow.ts from
 * binary COPY, duckdb/arrow-chunks.ts from DuckDB's chunks), laid out as the Arrow encoder lays out
 * the same values (encode.ts: validity bitmaps, offsets, zeroed NULL slots), so that a result is
 * the same bytes whichever path read it (a replay's digest, DESIGN.md §17).
 */
import { ValueDoesNotFit, type BatchBuffer, type ColumnPlan } from "./columns.ts";
import type { EncoderColumn } from "./encode.ts";
import { fitProblem } from "./fit.ts";
import { recordBatchMessage } from "./ipc.ts";

/**
 * Bytes that grow by doubling, kept from batch to batch. They start small: a 10-row answer must not
 * pay for zeroing a large buffer per column.
 */
export class Growing {
  bytes: Uint8Array;
  view: DataView;

  constructor() {
    // Views over an ArrayBuffer made first: asking a typed array for its `.buffer` is slow in JSC (columns.ts BatchBuffer).
    const buffer = new ArrayBuffer(256);
    this.bytes = new Uint8Array(buffer);
    this.view = new DataView(buffer);
  }

  ensure(length: number): void {
    if (length <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < length) size *= 2;
    const buffer = new ArrayBuffer(size);
    const next = new Uint8Array(buffer);
    next.set(this.bytes);
    this.bytes = next;
    this.view = new DataView(buffer);
  }
}

/** Rows of a batch that are NULL, written as the encoder writes its validity bitmap (every bit set, then the NULLs cleared). */
export class Nulls {
  rows: number[] = [];

  get first(): number {
    return this.rows.length > 0 ? this.rows[0]! : -1;
  }

  write(out: BatchBuffer, at: number, length: number): number {
    if (length === 0) return this.rows.length;
    out.bytes.fill(0xff, at, at + length);
    for (const row of this.rows) out.bytes[at + (row >> 3)]! &= ~(1 << (row & 7));
    return this.rows.length;
  }
}

/** The validity bitmap's bytes: none for a NOT NULL column. */
export const validityLength = (rows: number, nullable: boolean) => (nullable ? (rows + 7) >> 3 : 0);

/** A column of fixed-width values or bits: its validity, then the first `length` bytes of `data`. */
export function flatPlan(rows: number, nullable: boolean, nulls: Nulls, data: Uint8Array, length: number): ColumnPlan {
  const validity = validityLength(rows, nullable);
  return {
    lengths: [validity, length],
    write(out, positions, first) {
      out.bytes.set(data.subarray(0, length), positions[first + 1]!);
      return nulls.write(out, positions[first]!, validity);
    },
  };
}

/** A Utf8 column: its validity, `rows + 1` offsets, then the first `bytes` bytes of `data`. */
export function utf8Plan(rows: number, nullable: boolean, nulls: Nulls, offsets: Int32Array, data: Uint8Array, bytes: number): ColumnPlan {
  const validity = validityLength(rows, nullable);
  return {
    lengths: [validity, (rows + 1) * 4, bytes],
    write(out, positions, first) {
      out.words.set(offsets.subarray(0, rows + 1), positions[first + 1]! >> 2);
      out.bytes.set(data.subarray(0, bytes), positions[first + 2]!);
      return nulls.write(out, positions[first]!, validity);
    },
  };
}

/**
 * The record-batch message of `rows` rows from the builders (with `frame` around it in the same
 * buffer), or the encoder's ValueDoesNotFit for the first NULL in a NOT NULL column (first such
 * column, then its first row, as encode.ts firstMisfit names it).
 */
export function builtBatch(
  builders: readonly { readonly firstNull: number; plan(): ColumnPlan }[],
  encoder: readonly EncoderColumn[],
  rows: number,
  firstRowIndex: number,
  frame?: { before: Uint8Array; after: Uint8Array },
): Uint8Array {
  for (let c = 0; c < builders.length; c++) {
    const at = builders[c]!.firstNull;
    if (at >= 0 && !encoder[c]!.nullable) {
      throw new ValueDoesNotFit(c, firstRowIndex + at, fitProblem(encoder[c]!.kind, null, { nullable: false }) ?? "NULL");
    }
  }
  return recordBatchMessage(rows, builders.map((builder) => builder.plan()), frame);
}
