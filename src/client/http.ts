/**
 * HTTP for the client: one GET whose whole body is read before it counts as answered, so a
 * connection lost mid-body is a network failure like a refused connection — the case in which a
 * paid request is retried with the same payment (ARCHITECTURE.md §6 replay rule). Every request asks for
 * compression and the body is decompressed as it arrives (content-coding.ts); a compressed body
 * that does not decode is a lost answer too.
 */
import { ACCEPT_ENCODING, decodedStream, readContentEncoding } from "./content-coding.ts";

export interface Answer {
  status: number;
  headers: Headers;
  /** The body as sent before any Content-Encoding: the exact bytes of the resource. */
  body: Uint8Array;
  /** Bytes received on the wire (fewer than the body's when it came compressed). */
  wireBytes: number;
}

export type Sent = { ok: true; answer: Answer } | { ok: false; reason: string };

export interface SendOptions {
  headers?: Record<string, string>;
  /** Called with the bytes received on the wire so far, as they arrive. */
  onProgress?: (bytes: number) => void;
  timeoutMs?: number;
}

/** A body that arrived but cannot be read: its reason is the whole message. */
class UnreadableBody extends Error {}

export async function send(url: string, options: SendOptions = {}): Promise<Sent> {
  try {
    const response = await fetch(url, {
      headers: { "accept-encoding": ACCEPT_ENCODING, ...options.headers },
      // Decompressed by readBody, once; Bun's own decompression would hide the wire bytes.
      decompress: false,
      redirect: "follow",
      ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
    });
    const { body, wireBytes } = await readBody(response, options.onProgress);
    return { ok: true, answer: { status: response.status, headers: response.headers, body, wireBytes } };
  } catch (error) {
    return { ok: false, reason: error instanceof UnreadableBody ? error.message : networkReason(url, error) };
  }
}

async function readBody(response: Response, onProgress?: (bytes: number) => void): Promise<{ body: Uint8Array; wireBytes: number }> {
  if (response.body === null) return { body: new Uint8Array(), wireBytes: 0 };
  const decoding = readContentEncoding(response.headers.get("content-encoding"));
  if (!decoding.ok) {
    await response.body.cancel().catch(() => {});
    throw new UnreadableBody(decoding.reason);
  }
  let wireBytes = 0;
  let wireComplete = false;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        wireBytes += chunk.byteLength;
        onProgress?.(wireBytes);
        controller.enqueue(chunk);
      },
      flush() {
        wireComplete = true;
      },
    }),
  );
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of decodedStream(counted, decoding.codings)) {
      chunks.push(chunk);
      total += chunk.byteLength;
    }
  } catch (error) {
    // The whole body arrived, so the fault is in the bytes, not the connection.
    if (wireComplete) throw new UnreadableBody(`the ${decoding.codings.join("+")}-compressed answer does not decompress (${(error as Error).message})`);
    throw error;
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body, wireBytes };
}

function networkReason(url: string, error: unknown): string {
  const origin = safeOrigin(url);
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  if (code === "ConnectionRefused" || code === "ECONNREFUSED") return `cannot connect to ${origin} (connection refused)`;
  if (error instanceof DOMException && error.name === "TimeoutError") return `no answer from ${origin} in time`;
  // Bun appends advice about its own `verbose` option, which is no use to the user here.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.? For more information, pass `verbose: true`.*$/s, "");
  return `the connection to ${origin} failed (${message})`;
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Text of a plain-text (or JSON `{error}`) error body, on one line. */
export function errorText(answer: Answer): string {
  const text = new TextDecoder().decode(answer.body).trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed && typeof parsed.error === "string") return oneLine(parsed.error);
  } catch {
    // plain text
  }
  return oneLine(text) || `HTTP ${answer.status}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").slice(0, 2000);
}
