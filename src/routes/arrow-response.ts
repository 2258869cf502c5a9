/** Responses carrying Arrow IPC streams (spec: `application/vnd.apache.arrow.stream`). */
import type { QueryResult } from "../db/execute.ts";
import type { BodyTracker } from "./client-limit.ts";
import { ARROW_STREAM } from "../service/query-service.ts";

export { ARROW_STREAM };

/** A complete result goes out as one buffer with its Content-Length; a streamed one chunk by chunk. */
export function arrowResponse(result: QueryResult, headers: Record<string, string> = {}, track?: BodyTracker): Response {
  const payload = "complete" in result ? oneBuffer(result.complete) : (track?.(result.body) ?? result.body);
  return new Response(payload as BodyInit, { status: 200, headers: { "content-type": ARROW_STREAM, ...headers } });
}

function oneBuffer(chunks: Uint8Array[]): Uint8Array | Blob {
  return chunks.length === 1 ? chunks[0]! : new Blob(chunks as BlobPart[]);
}
