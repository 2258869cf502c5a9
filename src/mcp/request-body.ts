/**
 * Reads a POST /mcp body within a size and a time bound (ARCHITECTURE.md §11 "Hostile clients"). The
 * size bound is the MCP SDK's (4 MiB, checked as its own reader does); the time bound is
 * `limits.receive_timeout_ms`, for the whole body: a client that sends a byte now and then would
 * otherwise hold its query slot, and the bytes it sent, for as long as it likes.
 */
export type BodyRead = { kind: "text"; text: string } | { kind: "too-large" } | { kind: "too-slow" } | { kind: "cut-off" };

export async function readBodyWithin(request: Request, maxBytes: number, timeoutMs: number): Promise<BodyRead> {
  if (Number(request.headers.get("content-length")) > maxBytes) return { kind: "too-large" };
  if (request.body === null) return { kind: "text", text: "" };
  const reader = request.body.getReader();
  let late = false;
  // Cancelling ends the pending read, so nothing is left waiting on the client.
  const timer = setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  const decoder = new TextDecoder();
  let received = 0;
  let text = "";
  try {
    for (;;) {
      // A read fails when the client closes the connection mid-body: an answer nobody may read.
      const read = await reader.read().catch(() => null);
      if (late) return { kind: "too-slow" };
      if (read === null) return { kind: "cut-off" };
      const { done, value } = read;
      if (done) break;
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => {});
        return { kind: "too-large" };
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  return { kind: "text", text: text + decoder.decode() };
}
