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
 * What a column builder keeps of the batch it builds (postgres/copy-arrow.ts, duckdb/arrow-chunks.ts):
 * its bytes, kept from batch to batch, its NULL rows and its row count. A subclass appends values
 * its own way and hands each batch over as a plan, which starts the next batch empty.
 */
export abstract class BuiltColumn {
  protected readonly data = new Growing();
  protected nulls = new Nulls();
  protected n = 0;

  constructor(protected readonly nullable: boolean) {}

  /** Row (in the batch) of the first NULL, or -1. */
  get firstNull(): number {
    return this.nulls.first;
  }

  /** Bytes of the buffers it keeps from batch to batch. */
  get retainedBytes(): number {
    return this.data.bytes.byteLength;
  }

  /** The batch's buffers as a plan of the encoder's (columns.ts); the next batch starts empty. */
  abstract plan(): ColumnPlan;

  /** The batch as a fixed-width or bit column of its first `length` bytes. */
  protected flatBatch(length: number): ColumnPlan {
    const plan = flatPlan(this.n, this.nullable, this.nulls, this.data.bytes, length);
    this.n = 0;
    this.nulls = new Nulls();
    return plan;
  }
}

/** A Utf8 column's builder: the values' bytes end to end, and where each one ends. */
export abstract class BuiltUtf8Column extends BuiltColumn {
  protected offsets = new Int32Array(64);
  protected end = 0;

  override get retainedBytes(): number {
    return this.data.bytes.byteLength + this.offsets.byteLength;
  }

  /** Room in `offsets` for a batch of `rows` rows. */
  protected offsetsFor(rows: number): void {
    if (rows + 1 <= this.offsets.length) return;
    let size = this.offsets.length * 2;
    while (size < rows + 1) size *= 2;
    const next = new Int32Array(size);
    next.set(this.offsets);
    this.offsets = next;
  }

  /** The batch as a Utf8 column (its own buffers unless others are given: text replaced, say). */
  protected utf8Batch(data: Uint8Array = this.data.bytes, offsets: Int32Array = this.offsets, bytes: number = this.end): ColumnPlan {
    const plan = utf8Plan(this.n, this.nullable, this.nulls, offsets, data, bytes);
    this.n = 0;
    this.end = 0;
    this.nulls = new Nulls();
    return plan;
  }
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
