/**
 * Variable-width columns: Utf8 and Binary (int32 offsets, then the bytes). The plan reads the
 * values once to learn the byte length; the write puts the bytes at their final position.
 */
import { slowValue, Validity, validityLength, type Cells, type ColumnContext, type ColumnPlan } from "./columns.ts";

const EMPTY = new Uint8Array(0);
const utf8 = new TextEncoder();

/**
 * Text is joined and encoded with one native call while it is ASCII (the common case), instead of
 * one call per value; a batch with other characters is measured and encoded value by value.
 */
export function planUtf8(rows: Cells, column: number, context: ColumnContext): ColumnPlan {
  const n = rows.length;
  const key = context.key;
  const validity = new Validity(new Uint8Array(validityLength(n, context.nullable)));
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
    lengths: [validity.bits.byteLength, (n + 1) * 4, offsets[n]!],
    write(out, [validityAt, offsetsAt, dataAt]) {
      out.set(validity.bits, validityAt!);
      out.set(new Uint8Array(offsets.buffer), offsetsAt!);
      if (ascii) utf8.encodeInto(joined, out.subarray(dataAt!, dataAt! + chars));
      else for (let r = 0; r < n; r++) utf8.encodeInto(texts[r]!, out.subarray(dataAt! + offsets[r]!, dataAt! + offsets[r + 1]!));
      return validity.nullCount;
    },
  };
}

export function planBinary(rows: Cells, column: number, context: ColumnContext): ColumnPlan {
  const n = rows.length;
  const key = context.key;
  const validity = new Validity(new Uint8Array(validityLength(n, context.nullable)));
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
    lengths: [validity.bits.byteLength, (n + 1) * 4, total],
    write(out, [validityAt, offsetsAt, dataAt]) {
      out.set(validity.bits, validityAt!);
      out.set(new Uint8Array(offsets.buffer), offsetsAt!);
      for (let r = 0; r < n; r++) out.set(blobs[r]!, dataAt! + offsets[r]!);
      return validity.nullCount;
    },
  };
}
