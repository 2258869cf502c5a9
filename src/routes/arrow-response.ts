/** Responses carrying Arrow IPC streams (spec: `application/vnd.apache.arrow.stream`). */
import { completeBody } from "../db/execute.ts";

export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

/**
 * A streamed result that had already ended when the response started (a small result) is sent
 * as one buffer with its Content-Length: cheaper than a stream for the server and the client.
 */
export function arrowResponse(body: ReadableStream<Uint8Array> | Uint8Array[], headers: Record<string, string> = {}): Response {
  const chunks = Array.isArray(body) ? body : completeBody(body);
  const payload = chunks === undefined ? body : new Blob(chunks as BlobPart[]);
  return new Response(payload as BodyInit, { status: 200, headers: { "content-type": ARROW_STREAM, ...headers } });
}
