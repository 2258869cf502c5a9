/**
 * Helpers for the PostgreSQL decoding tests: the bytes of a real binary COPY, and the decoder fed
 * with them in chunks of chosen sizes.
 */
import type { SQL } from "bun";
import { BinaryCopyDecoder, type CopyDecoderOptions, type DecodedBatch } from "../../../src/engines/postgres/copy-binary.ts";
import type { DecodeColumn } from "../../../src/engines/postgres/types.ts";
import { mulberry32 } from "../../support/random.ts";

/** The bytes of `COPY (select) TO STDOUT (FORMAT binary)`, as one array. */
export async function copyBytes(sql: SQL, select: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of sql.unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`).readable()) chunks.push(chunk);
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return all;
}

/** Chunk sizes from 1 byte to 64 KiB, log-uniform (as many tiny chunks as large ones), seeded. */
export function randomChunkSizes(seed: number): () => number {
  const random = mulberry32(seed);
  return () => Math.max(1, Math.floor(2 ** (random() * 16)));
}

/**
 * Decodes `bytes` fed in chunks of `size()` bytes (each a fresh copy, as a driver hands them over);
 * the batches in order, and their rows.
 */
export function decodeInChunks(
  columns: readonly DecodeColumn[],
  bytes: Uint8Array,
  size: () => number = () => bytes.length,
  options?: CopyDecoderOptions,
): { rows: unknown[][]; batches: DecodedBatch[] } {
  const batches = feedDecoder(new BinaryCopyDecoder(columns, options), bytes, size);
  return { rows: batches.flatMap((b) => b.rows), batches };
}

/** Feeds `bytes` to `decoder` in chunks of `size()` bytes, ends the stream, and returns every batch. */
export function feedDecoder(decoder: BinaryCopyDecoder, bytes: Uint8Array, size: () => number): DecodedBatch[] {
  const batches: DecodedBatch[] = [];
  for (let at = 0; at < bytes.length; ) {
    const n = Math.min(bytes.length - at, size());
    batches.push(...decoder.push(bytes.slice(at, at + n)));
    at += n;
  }
  const last = decoder.end();
  return last === null ? batches : [...batches, last];
}

/** What `action` throws (fails the test when it returns). */
export function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, nothing was thrown");
}
