/** Responses carrying Arrow IPC streams (spec: `application/vnd.apache.arrow.stream`). */
export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

export function arrowResponse(body: ReadableStream<Uint8Array> | Uint8Array[], headers: Record<string, string> = {}): Response {
  const payload = Array.isArray(body) ? new Blob(body as BlobPart[]) : body;
  return new Response(payload, { status: 200, headers: { "content-type": ARROW_STREAM, ...headers } });
}
