/**
 * HTTP compression of query results (ARCHITECTURE.md §13): `Accept-Encoding: zstd` or `gzip` compresses
 * the body as it is written (Content-Encoding, not Arrow's own buffer compression, which many
 * readers lack). zstd is preferred when a client accepts both equally; q=0 refuses a coding.
 */

export type ContentCoding = "zstd" | "gzip";

/** Codings in order of preference at equal q. */
const SUPPORTED: readonly ContentCoding[] = ["zstd", "gzip"];

/**
 * Complete bodies smaller than this are sent as they are: a small answer saves a few hundred bytes
 * at the cost of a compressor per response (many clients, Bun's fetch among them, ask for
 * compression by default), on the hot path of small free queries. Compression is for exports.
 */
export const MIN_COMPRESSED_BYTES = 16 * 1024;

/** A paid answer already waited milliseconds for its settlement: compressing it costs nothing in comparison. */
export const MIN_COMPRESSED_PAID_BYTES = 1024;

/** Bytes handed to the compressor at a time, so a large buffered result never blocks the thread long. */
const SLICE_BYTES = 1 << 20;

/** The coding to answer with, or null for none (identity). */
export function negotiateCoding(acceptEncoding: string | null): ContentCoding | null {
  if (acceptEncoding === null || acceptEncoding.trim() === "") return null;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q.set(name.trim(), Number.isFinite(value) ? value : 0);
  }
  let best: ContentCoding | null = null;
  let bestQ = 0;
  for (const coding of SUPPORTED) {
    const weight = q.get(coding) ?? q.get("*") ?? 0;
    if (weight > bestQ) {
      best = coding;
      bestQ = weight;
    }
  }
  return best;
}

/** The body compressed as it is read; a buffered body is fed to the compressor in slices. */
export function compressBody(body: ReadableStream<Uint8Array> | Uint8Array[], coding: ContentCoding): ReadableStream<Uint8Array> {
  const source = Array.isArray(body) ? sliced(body) : body;
  return source.pipeThrough(new CompressionStream(coding as CompressionFormat) as unknown as TransformStream<Uint8Array, Uint8Array>);
}

function sliced(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index];
      if (chunk === undefined) return controller.close();
      const end = Math.min(chunk.byteLength, offset + SLICE_BYTES);
      controller.enqueue(chunk.subarray(offset, end));
      offset = end;
      if (offset >= chunk.byteLength) {
        index++;
        offset = 0;
      }
    },
  });
}
