/**
 * Bodies that wait for their client (ARCHITECTURE.md §11 "Hostile clients"; DESIGN.md §17 "Unpaid
 * answers are bounded per client"). A complete answer handed to the HTTP server as one buffer is
 * out of sight: a client that reads nothing keeps it in memory for as long as its connection lives,
 * outside every limit (200 requests of 8 MB answers held 1.4 GB for minutes). So a complete answer
 * above a few socket buffers' worth is sent as a body its client pulls, slice by slice:
 * - it holds its client's place (`limits.max_concurrent_per_client`) until its last byte is taken;
 * - its bytes count against the server's unsent-bytes budget (`limits.unsent_budget_mb`) until taken;
 * - it is cut once its client has taken nothing for `limits.send_timeout_ms`.
 * The held paid results (held-result.ts) are sent the same way.
 */
import { SendTimeoutError } from "./outgoing.ts";
import { noteRows, notifyCut } from "./result-stream.ts";

/** Complete answers up to this size go out as one buffer: the socket's own buffers take them at once. */
export const SMALL_ANSWER_BYTES = 64 * 1024;

/** Bytes handed to the response per pull, so that the client's pace holds back what it is given. */
const SLICE_BYTES = 64 * 1024;

/** The bytes of complete answers not yet taken by their clients, across all responses. */
export class UnsentBytes {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes `bytes` if the budget has room, or whatever it has when `always` (a paid answer is never refused). */
  take(bytes: number, always = false): boolean {
    if (!always && this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get usedBytes(): number {
    return this.used;
  }

  /** No room left: a free query is turned away before it is read (execute.ts `stream`). */
  get full(): boolean {
    return this.used >= this.limitBytes;
  }
}

/** The 503 of a free query while the budget is full: nothing was read or lost, it can be asked again. */
export const BUSY_MESSAGE = "The server is holding as many answers as it can for clients that have not read them yet: retry in a few seconds.";
export const BUSY_RETRY_SECONDS = 5;

/**
 * A body read from `next()` (undefined: the end) as its client takes it, cut once the client has
 * taken nothing for `sendTimeoutMs` (its cut listeners told, result-stream.ts `whenCut`). `done`
 * runs once, when the body ends, is cancelled or is cut. The timer starts when the body is made:
 * make it when the answer is sent.
 */
export function timedBody(next: () => Uint8Array | undefined, sendTimeoutMs: number, rows: number, done: () => void): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let ended = false;
  const end = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (ended) return;
    ended = true;
    done();
  };
  const arm = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      end();
      controller.error(new SendTimeoutError(sendTimeoutMs));
      notifyCut(body);
    }, sendTimeoutMs);
    (timer as { unref?: () => void }).unref?.();
  };
  const body: ReadableStream<Uint8Array> = new ReadableStream<Uint8Array>(
    {
      start: (controller) => arm(controller),
      pull: (controller) => {
        const chunk = ended ? undefined : next();
        if (chunk === undefined) {
          end();
          controller.close();
          return;
        }
        arm(controller);
        controller.enqueue(chunk);
      },
      cancel: () => end(),
    },
    { highWaterMark: 0 },
  );
  noteRows(body, rows);
  return body;
}

/**
 * A complete answer as a body its client pulls, its bytes counted in `unsent` until the body ends
 * (the slices share the answer's buffers, which stay in memory until the last one is taken). Null
 * when the budget has no room (the caller refuses the request, 503: nothing is lost, it can be
 * asked again); a paid answer is never refused.
 */
export function pulledBody(
  chunks: readonly Uint8Array[],
  rows: number,
  sending: { unsent: UnsentBytes; sendTimeoutMs: number },
  paid: boolean,
): ReadableStream<Uint8Array> | null {
  const total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  if (!sending.unsent.take(total, paid)) return null;
  let index = 0;
  let offset = 0;
  const next = () => {
    const chunk = chunks[index];
    if (chunk === undefined) return undefined;
    const slice = chunk.subarray(offset, offset + SLICE_BYTES);
    offset += slice.byteLength;
    if (offset >= chunk.byteLength) {
      index += 1;
      offset = 0;
    }
    return slice;
  };
  return timedBody(next, sending.sendTimeoutMs, rows, () => sending.unsent.give(total));
}
