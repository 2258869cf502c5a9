/**
 * Variable-width columns: Utf8 and Binary (int32 offsets, then the bytes; List, list.ts, shares the
 * offsets). The plan reads the
 * values once to learn the byte length; the write puts the bytes at their final position.
 */
import { slowValue, Validity, validityLength, type BatchBuffer, type Cells, type ColumnContext, type ColumnPlan } from "./columns.ts";

const EMPTY = new Uint8Array(0);
const utf8 = new TextEncoder();

/**
 * Text is joined and encoded with one native call while it is ASCII (the common case), instead of
 * one call per value; a batch with other characters is measured and encoded value by value.
 */
export function planUtf8(rows: Cells, column: number, context: ColumnContext): ColumnPlan {
  const n = rows.length;
  const key = context.key;
  const validity = standaloneValidity(n, context.nullable);
  const offsets = new Int32Array(n + 1);
  const texts: string[] = new Array(n);
  let chars = 0;
  for (let r = 0; r < n; r++) {
    const value = rows[r]![key];
    const text = typeof value === "string" ? value : ((slowValue(value, r, column, context, validity) as string | null) ?? "");
    texts[r] = text;
    chars += text.length;
    offsets[r + 1] = chars;
  }
  const joined = texts.join("");
  const ascii = Buffer.byteLength(joined, "utf8") === chars;
  if (!ascii) {
    // Measured value by value: a surrogate pair split across two values encodes differently joined.
    for (let r = 0; r < n; r++) offsets[r + 1] = offsets[r]! + Buffer.byteLength(texts[r]!, "utf8");
  }
  return {
    lengths: [validity.length, (n + 1) * 4, offsets[n]!],
    write(out, positions, first) {
      const dataAt = positions[first + 2]!;
      const bytes = out.bytes;
      writeValidityAndOffsets(out, positions, first, validity, offsets);
      if (ascii) utf8.encodeInto(joined, bytes.subarray(dataAt, dataAt + chars));
      else for (let r = 0; r < n; r++) utf8.encodeInto(texts[r]!, bytes.subarray(dataAt + offsets[r]!, dataAt + offsets[r + 1]!));
      return validity.nullCount;
    },
  };
}

export function planBinary(rows: Cells, column: number, context: ColumnContext): ColumnPlan {
  const n = rows.length;
  const key = context.key;
  const validity = standaloneValidity(n, context.nullable);
  const offsets = new Int32Array(n + 1);
  const blobs: Uint8Array[] = new Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    const value = rows[r]![key];
    const blob = value instanceof Uint8Array ? value : ((slowValue(value, r, column, context, validity) as Uint8Array | null) ?? EMPTY);
    blobs[r] = blob;
    total += blob.byteLength;
    offsets[r + 1] = total;
  }
  return {
    lengths: [validity.length, (n + 1) * 4, total],
    write(out, positions, first) {
      const dataAt = positions[first + 2]!;
      const bytes = out.bytes;
      writeValidityAndOffsets(out, positions, first, validity, offsets);
      for (let r = 0; r < n; r++) bytes.set(blobs[r]!, dataAt + offsets[r]!);
      return validity.nullCount;
    },
  };
}

/** Nulls are found while sizing, before the batch buffer exists: the bitmap is built apart, then copied. */
export function standaloneValidity(rows: number, nullable: boolean): Validity {
  const length = validityLength(rows, nullable);
  return new Validity(new Uint8Array(length), 0, length);
}

export function writeValidityAndOffsets(out: BatchBuffer, positions: readonly number[], first: number, validity: Validity, offsets: Int32Array): void {
  if (validity.length > 0) out.bytes.set(validity.bytes, positions[first]!);
  // Int32 to Int32: `offsets.buffer` would make the engine give the small array a buffer object first.
  out.words.set(offsets, positions[first + 1]! >> 2);
}
