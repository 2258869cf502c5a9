/**
 * The 200 response carrying a query result in its negotiated format (ARCHITECTURE.md §13): one buffer
 * with its Content-Length when the result was complete before the response started, otherwise the
 * stream chunk by chunk; compressed as it is written when the client asked for it. A HEAD gets the
 * headers a GET would, without the content: a streamed result is stopped at once rather than read
 * to the end for a length nobody receives (RFC 9110 §9.3.2 lets a HEAD omit Content-Length).
 */
import type { QueryResult } from "../results/executor.ts";
import { BUSY_MESSAGE, BUSY_RETRY_SECONDS, pulledBody, SMALL_ANSWER_BYTES, type UnsentBytes } from "../results/sent-body.ts";
import { ServerBusyError } from "../errors.ts";
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
  /** The request is a HEAD: headers only. */
  head?: boolean;
  /**
   * How answers wait for their clients (results/sent-body.ts): a complete answer over SMALL_ANSWER_BYTES
   * is sent as a body its client pulls, counted in `unsent` and cut after `sendTimeoutMs`.
   */
  sending?: { unsent: UnsentBytes; sendTimeoutMs: number };
  /** A paid answer: never refused for want of room (its payment is settled). */
  paid?: boolean;
}

export function resultResponse(result: QueryResult, options: ResultResponseOptions): Response {
  const headers: Record<string, string> = { "content-type": options.format.contentType, vary: "Accept, Accept-Encoding", ...options.headers };
  let complete = "complete" in result ? result.complete : null;
  let stream = "body" in result ? result.body : null;
  if (complete !== null && options.sending !== undefined && options.head !== true && byteLength(complete) > SMALL_ANSWER_BYTES) {
    // Held for a client that may never read it: counted, tracked and cut like any stream (DESIGN.md §17).
    stream = pulledBody(complete, "rows" in result ? result.rows : 0, options.sending, options.paid === true);
    if (stream === null) throw new ServerBusyError(BUSY_MESSAGE, BUSY_RETRY_SECONDS);
    complete = null;
  }
  const size = complete?.reduce((sum, chunk) => sum + chunk.byteLength, 0) ?? Number.POSITIVE_INFINITY;
  const coding = options.coding !== null && size >= (options.minCompressedBytes ?? MIN_COMPRESSED_BYTES) ? options.coding : null;
  if (coding !== null) headers["content-encoding"] = coding;
  if (options.head === true && stream !== null) {
    // Left to Bun, a HEAD's stream would be read (and compressed) whole to count its bytes.
    void stream.cancel();
    return new Response(null, { status: 200, headers: { ...headers, "transfer-encoding": "chunked" } });
  }
  if (coding !== null) {
    const body = compressBody(complete ?? stream!, coding);
    return new Response(options.track?.(body, stream ?? undefined) ?? body, { status: 200, headers });
  }
  if (complete !== null) return new Response(oneBuffer(complete) as BodyInit, { status: 200, headers });
  return new Response(options.track?.(stream!) ?? stream!, { status: 200, headers });
}

function byteLength(chunks: readonly Uint8Array[]): number {
  return chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
}

function oneBuffer(chunks: Uint8Array[]): Uint8Array | Blob {
  return chunks.length === 1 ? chunks[0]! : new Blob(chunks as BlobPart[]);
}
