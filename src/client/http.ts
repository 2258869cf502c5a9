/**
 * HTTP for the client: one GET whose whole body is read before it counts as answered, so a
 * connection lost mid-body is a network failure like a refused connection — the case in which a
 * paid request is retried with the same payment (ARCHITECTURE.md §6 replay rule). Every request asks for
 * compression and the body is decompressed as it arrives (content-coding.ts); a compressed body
 * that does not decode is a lost answer too.
 *
 * A body is read under a bound (DESIGN §17): counted on the wire and once decompressed, so that a
 * few kilobytes of zstd cannot become gigabytes. A 200's body can be written to a file as it
 * arrives instead of being held (`toFile`); every other answer is a short text or document.
 */
import { open } from "node:fs/promises";
import { DEFAULT_MAX_BYTES, describeBytes } from "./byte-size.ts";
import { ACCEPT_ENCODING, decodedStream, readContentEncoding } from "./content-coding.ts";

/** The body of any answer other than a 200 (an error text, a 402's document): a few KB from an honest server. */
export const SMALL_BODY_MAX_BYTES = 1024 ** 2;

export interface Answer {
  status: number;
  headers: Headers;
  /** The body as sent before any Content-Encoding: the exact bytes of the resource (empty when written to `toFile`). */
  body: Uint8Array;
  /** Bytes of the body once decompressed, held or written. */
  bodyBytes: number;
  /** Bytes received on the wire (fewer than the body's when it came compressed). */
  wireBytes: number;
}

/**
 * `lost`: the answer may have been lost on the way (the connection broke, the bytes do not
 * decode), so sending again may recover it; otherwise it arrived and was refused (too large) or
 * could not be kept, and sending again would end the same.
 */
export type Sent = { ok: true; answer: Answer } | { ok: false; reason: string; lost: boolean };

export interface SendOptions {
  headers?: Record<string, string>;
  /** Called with the bytes received on the wire so far, as they arrive. */
  onProgress?: (bytes: number) => void;
  timeoutMs?: number;
  /** Most bytes of a 200's body, on the wire and decompressed (default DEFAULT_MAX_BYTES). */
  maxBytes?: number;
  /** Said after the refusal of a 200's body over `maxBytes`: what the user can change. */
  overBoundAdvice?: string;
  /** A 200's body is written here as it arrives (the file created or emptied), not held in memory. */
  toFile?: string;
}

/** A body that arrived but cannot be read: its reason is the whole message. */
class UnreadableBody extends Error {}

/** A body refused or not kept: sending again would end the same. */
class RefusedBody extends Error {}

export async function send(url: string, options: SendOptions = {}): Promise<Sent> {
  try {
    const response = await fetch(url, {
      headers: { "accept-encoding": ACCEPT_ENCODING, ...options.headers },
      // Decompressed by readBody, once, under its bound; Bun's own decompression would hide the
      // wire bytes and hold the whole body (ARCHITECTURE.md §10).
      decompress: false,
      redirect: "follow",
      ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
    });
    const read = await readBody(response, options);
    return { ok: true, answer: { status: response.status, headers: response.headers, ...read } };
  } catch (error) {
    if (error instanceof RefusedBody) return { ok: false, reason: error.message, lost: false };
    return { ok: false, reason: error instanceof UnreadableBody ? error.message : networkReason(url, error), lost: true };
  }
}

type Read = Pick<Answer, "body" | "bodyBytes" | "wireBytes">;

async function readBody(response: Response, options: SendOptions): Promise<Read> {
  if (response.body === null) return { body: new Uint8Array(), bodyBytes: 0, wireBytes: 0 };
  const decoding = readContentEncoding(response.headers.get("content-encoding"));
  if (!decoding.ok) {
    await response.body.cancel().catch(() => {});
    throw new UnreadableBody(decoding.reason);
  }
  const whole = response.status === 200;
  const bound = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const limit = whole ? bound : Math.min(bound, SMALL_BODY_MAX_BYTES);
  const what = decoding.codings.length > 0 ? `the ${decoding.codings.join("+")}-compressed answer` : "the answer";
  const overBound = (how: string) =>
    new RefusedBody(
      whole
        ? `${what} is larger than ${describeBytes(limit)}${how}${options.overBoundAdvice ? `: ${options.overBoundAdvice}` : ""}`
        : `the server's ${response.status} answer is larger than ${describeBytes(limit)}${how}, more than an error or payment document needs`,
    );
  const decompressed = decoding.codings.length > 0 ? " once decompressed" : "";

  if (Number(response.headers.get("content-length") ?? Number.NaN) > limit) {
    await response.body.cancel().catch(() => {});
    throw overBound(", by its Content-Length");
  }
  let sink: Sink;
  try {
    sink = whole && options.toFile !== undefined ? await fileSink(options.toFile) : memorySink();
  } catch (error) {
    await response.body.cancel().catch(() => {});
    throw error;
  }
  let wireBytes = 0;
  let wireComplete = false;
  let wireOver = false;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        wireBytes += chunk.byteLength;
        options.onProgress?.(wireBytes);
        // Counted here too: a compressed body can be all frames that decompress to nothing.
        if (wireBytes > limit) {
          wireOver = true;
          controller.error(new Error("over the bound"));
          return;
        }
        controller.enqueue(chunk);
      },
      flush() {
        wireComplete = true;
      },
    }),
  );
  let total = 0;
  try {
    // Bun's DecompressionStream yields at most about 1 MB per chunk and decodes no further than
    // it is read, so stopping at the bound stops the work and the memory with it.
    for await (const chunk of decodedStream(counted, decoding.codings)) {
      total += chunk.byteLength;
      if (total > limit) throw overBound(decompressed);
      await sink.write(chunk);
    }
  } catch (error) {
    await sink.close();
    if (error instanceof RefusedBody) throw error;
    if (wireOver) throw overBound(" as sent");
    // The whole body arrived, so the fault is in the bytes, not the connection.
    if (wireComplete) throw new UnreadableBody(`the ${decoding.codings.join("+")}-compressed answer does not decompress (${(error as Error).message})`);
    throw error;
  }
  return { body: await sink.close(), bodyBytes: total, wireBytes };
}

interface Sink {
  write(chunk: Uint8Array): Promise<void>;
  /** Ends the sink: the bytes held (none for a file). */
  close(): Promise<Uint8Array>;
}

function memorySink(): Sink {
  const chunks: Uint8Array[] = [];
  return {
    async write(chunk) {
      chunks.push(chunk);
    },
    async close() {
      const body = Bun.concatArrayBuffers(chunks, Infinity, true);
      chunks.length = 0;
      return body;
    },
  };
}

async function fileSink(path: string): Promise<Sink> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, "w");
  } catch (error) {
    throw new RefusedBody(`cannot write the answer to ${path}: ${(error as Error).message}`);
  }
  let closed = false;
  return {
    async write(chunk) {
      try {
        for (let offset = 0; offset < chunk.byteLength; ) offset += (await file.write(chunk, offset)).bytesWritten;
      } catch (error) {
        throw new RefusedBody(`cannot write the answer to ${path}: ${(error as Error).message}`);
      }
    },
    async close() {
      if (!closed) {
        closed = true;
        await file.close();
      }
      return new Uint8Array();
    },
  };
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
