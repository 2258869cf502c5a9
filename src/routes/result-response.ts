/**
 * The 200 response carrying a query result in its negotiated format (ARCHITECTURE.md §13): one buffer
 * with its Content-Length when the result was complete before the response started, otherwise the
 * stream chunk by chunk; compressed as it is written when the client asked for it.
 */
import type { QueryResult } from "../db/execute.ts";
import type { OutputFormat } from "../formats/registry.ts";
import type { BodyTracker } from "./client-limit.ts";
import { compressBody, MIN_COMPRESSED_BYTES, type ContentCoding } from "./content-coding.ts";

export interface ResultResponseOptions {
  format: OutputFormat;
  coding: ContentCoding | null;
  /** Extra headers (PAYMENT-RESPONSE). */
  headers?: Record<string, string>;
  /** Follows a streamed body until it is sent (the per-client limit). */
  track?: BodyTracker;
  /** Complete bodies smaller than this are not compressed (default MIN_COMPRESSED_BYTES). */
  minCompressedBytes?: number;
}

export function resultResponse(result: QueryResult, options: ResultResponseOptions): Response {
  const headers: Record<string, string> = { "content-type": options.format.contentType, vary: "Accept, Accept-Encoding", ...options.headers };
  const complete = "complete" in result ? result.complete : null;
  const size = complete?.reduce((sum, chunk) => sum + chunk.byteLength, 0) ?? Number.POSITIVE_INFINITY;
  if (options.coding !== null && size >= (options.minCompressedBytes ?? MIN_COMPRESSED_BYTES)) {
    headers["content-encoding"] = options.coding;
    const body = compressBody(complete ?? (result as { body: ReadableStream<Uint8Array> }).body, options.coding);
    return new Response(options.track?.(body) ?? body, { status: 200, headers });
  }
  if (complete !== null) return new Response(oneBuffer(complete) as BodyInit, { status: 200, headers });
  const body = (result as { body: ReadableStream<Uint8Array> }).body;
  return new Response(options.track?.(body) ?? body, { status: 200, headers });
}

function oneBuffer(chunks: Uint8Array[]): Uint8Array | Blob {
  return chunks.length === 1 ? chunks[0]! : new Blob(chunks as BlobPart[]);
}
