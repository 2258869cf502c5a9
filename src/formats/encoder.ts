/**
 * The shape every output format shares (ARCHITECTURE.md §13): a head, one piece per batch of
 * rows, an end. It mirrors the Arrow StreamEncoder (schema message → record batches → end marker),
 * so a query worker drives every format the same way and sends each piece as soon as it is ready:
 * no format buffers the whole result.
 *
 * Rows arrive as the Arrow encoder takes them (arrow/encode.ts): arrays read by position, or objects
 * keyed by output column name from `stmt.iterate()` on a `safeIntegers: true` connection. A value
 * that does not fit its column's type throws the Arrow encoder's ValueDoesNotFit, naming the same
 * column and row: every format refuses exactly what Arrow refuses.
 *
 * Every returned Uint8Array owns its whole ArrayBuffer (offset 0, full length), so a worker can
 * transfer it to the HTTP thread without copying and without handing over unrelated bytes.
 */
import type { EncoderColumn, EncoderOptions, Row } from "../arrow/encode.ts";

export interface FormatEncoder {
  /** What precedes the rows: Arrow's schema message, CSV's header line, JSON's `[`, Parquet's magic. */
  head(): Uint8Array;
  /**
   * The rows of one batch, in order; throws ValueDoesNotFit. `firstRowIndex` positions errors in
   * the result only: it never changes the bytes. May be empty (Parquet fills a row group first).
   */
  batch(rows: readonly Row[], firstRowIndex: number): Uint8Array;
  /** What follows the rows: Arrow's end-of-stream marker, JSON's `]`, Parquet's footer. */
  end(): Uint8Array;
}

export type FormatOptions = EncoderOptions;

export type EncoderFactory = (columns: EncoderColumn[], options?: FormatOptions) => FormatEncoder;

/** Joins byte pieces into one buffer. */
export function concatBytes(pieces: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.byteLength, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.byteLength;
  }
  return out;
}

/** A whole result in one buffer (small results, tests): head, the rows in batches, end. */
export function encodeAll(encoder: FormatEncoder, rows: readonly Row[], batchSize = 16_384): Uint8Array {
  if (!(Number.isInteger(batchSize) && batchSize > 0)) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const pieces = [encoder.head()];
  for (let first = 0; first < rows.length; first += batchSize) pieces.push(encoder.batch(rows.slice(first, first + batchSize), first));
  pieces.push(encoder.end());
  return concatBytes(pieces);
}

const utf8 = new TextEncoder();

/** UTF-8 bytes of text in a buffer of their own (TextEncoder never hands out a pooled slice). */
export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}
