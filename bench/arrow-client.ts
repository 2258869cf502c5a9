/**
 * The benchmark's HTTP client: reads a whole Arrow response body, timing it, decompressing it if
 * it was compressed, and decodes it with apache-arrow.
 *
 * Bun's fetch asks for `gzip, deflate, br, zstd` unless told otherwise, and arrow402 compresses
 * for such a client (ARCHITECTURE.md §13); every request here names its Accept-Encoding, so an
 * uncompressed figure really is uncompressed. Bodies are read as sent (`decompress: false`) so the
 * bytes on the wire can be counted; a compressed body is decompressed as it streams in.
 */
import { tableFromIPC } from "apache-arrow";

export type Coding = "identity" | "zstd" | "gzip";

export interface ArrowRead {
  /** From the request to the first body bytes. */
  firstByteMs: number;
  /** From the request to the decoded table. */
  totalMs: number;
  /** Bytes of the body as sent (compressed, if it was). */
  wireBytes: number;
  /** Bytes of the Arrow stream. */
  bytes: number;
  rows: number;
  chunks: number;
}

export function queryUrl(baseUrl: string, sql: string): string {
  return `${baseUrl}/api/query?query=${encodeURIComponent(sql)}`;
}

/** Headers of a request that asks for `coding` only. */
export function codingHeaders(coding: Coding = "identity"): Record<string, string> {
  return { "accept-encoding": coding };
}

/** A fetch init that names the Accept-Encoding and keeps the body as sent. */
export function rawInit(coding: Coding = "identity", headers: Record<string, string> = {}): RequestInit {
  return { headers: { ...codingHeaders(coding), ...headers }, decompress: false } as RequestInit;
}

/** Reads every chunk of `body` as it arrives, counting them; `onFirst` runs at the first one. */
async function readChunks(body: ReadableStream<Uint8Array>, onFirst: () => void): Promise<{ chunks: Uint8Array[]; bytes: number }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (chunks.length === 0) onFirst();
    chunks.push(value);
    bytes += value.byteLength;
  }
  return { chunks, bytes };
}

/**
 * GETs `url` asking for `coding`, reads every chunk as it arrives, decompresses it as it streams
 * (for zstd and gzip), then decodes the stream. Throws unless the answer is 200 in that coding
 * with `expectedRows` rows (when given).
 */
export async function readArrow(url: string, options: { coding?: Coding; expectedRows?: number } = {}): Promise<ArrowRead> {
  const coding = options.coding ?? "identity";
  const start = performance.now();
  const response = await fetch(url, rawInit(coding));
  if (response.status !== 200) throw new Error(`${shortUrl(url)}: expected 200, got ${response.status} ${(await response.text()).slice(0, 300)}`);
  const encoding = response.headers.get("content-encoding") ?? "identity";
  if (encoding !== coding) {
    await response.body?.cancel();
    throw new Error(`${shortUrl(url)}: asked for Accept-Encoding ${coding}, got Content-Encoding ${encoding}`);
  }
  let firstByteMs = NaN;
  let wireBytes = 0;
  let body: ReadableStream<Uint8Array> = response.body!;
  if (coding !== "identity") {
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (wireBytes === 0) firstByteMs = performance.now() - start;
        wireBytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    body = body.pipeThrough(counter).pipeThrough(new DecompressionStream(coding as unknown as CompressionFormat) as unknown as TransformStream<Uint8Array, Uint8Array>);
  }
  const { chunks, bytes } = await readChunks(body, () => {
    if (coding === "identity") firstByteMs = performance.now() - start;
  });
  if (coding === "identity") wireBytes = bytes;
  const table = tableFromIPC(Buffer.concat(chunks, bytes));
  const totalMs = performance.now() - start;
  if (options.expectedRows !== undefined && table.numRows !== options.expectedRows) {
    throw new Error(`${shortUrl(url)}: expected ${options.expectedRows} rows, got ${table.numRows}`);
  }
  return { firstByteMs, totalMs, wireBytes, bytes, rows: table.numRows, chunks: chunks.length };
}

/** The URL with its query decoded and cut short, for error messages. */
export function shortUrl(url: string): string {
  const text = decodeURIComponent(url);
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
