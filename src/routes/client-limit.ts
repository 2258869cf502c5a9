/**
 * `limits.max_concurrent_per_client` (ARCHITECTURE.md §11 "Hostile clients"): one client address may run
 * at most this many queries at once; the next gets 429 with Retry-After. A query counts until its
 * response body has been sent (or the client went away), since a streaming response still holds
 * its worker or its spill file. Off (0) by default: behind a proxy every client shares the proxy's
 * address until `server.trust_proxy` names the header the proxy puts the client's address in.
 */
import { whenCut } from "../results/result-stream.ts";
import { TooManyRequestsError } from "../errors.ts";

/**
 * What clients hold and have been refused, by client key (client-key.ts). The server keeps one for
 * its lifetime: a reload changes the limits, not what clients already hold or were refused.
 */
export class ClientCounts {
  /** Queries running, per client. */
  readonly running = new Map<string, number>();
  /** When each place of a client's refused-payments budget was taken (refused-payments.ts). */
  readonly refusedPayments = new Map<string, number[]>();
}

export class ClientConcurrency {
  /** @param running queries running per client; kept across reloads (ClientCounts). */
  constructor(
    private readonly max: number,
    private readonly running = new Map<string, number>(),
  ) {}

  get enabled(): boolean {
    return this.max > 0;
  }

  /**
   * Runs `handle` for `address` if it is under its limit with `queries` more. An MCP POST takes one
   * before its body is read, and `queries` more, `held` being that first one, once its tool calls
   * are counted (mcp/server.ts). The slots are released when `handle` settles, or, if it streams a
   * body through `track`, once that body has been sent to the end, failed, or been cancelled.
   */
  async guard(address: string | null, handle: (track: BodyTracker) => Promise<Response>, queries = 1, held = 0): Promise<Response> {
    if (!this.enabled || address === null) return handle(untracked);
    const count = this.running.get(address) ?? 0;
    if (count + queries > this.max) {
      const others = count - held;
      const these = queries + held === 1 ? "" : ` and this request carries ${queries + held}`;
      throw new TooManyRequestsError(
        `This client already has ${others} ${others === 1 ? "query" : "queries"} running${these}, ${this.max} being the most one client may run at once: wait for one to finish, then retry`,
      );
    }
    this.running.set(address, count + queries);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.running.get(address) ?? queries) - queries;
      if (left <= 0) this.running.delete(address);
      else this.running.set(address, left);
    };
    let streaming = false;
    const track: BodyTracker = (body, result) => {
      streaming = true;
      return releasedWhenSent(body, release, result ?? body);
    };
    try {
      return await handle(track);
    } finally {
      if (!streaming) release();
    }
  }
}

/**
 * Wraps a streamed response body so that the limiter knows when it has been sent. `result`: the
 * query result's own body when `body` is made from it (compressed), which is what a send timeout
 * cuts (`whenCut`).
 */
export type BodyTracker = (body: ReadableStream<Uint8Array>, result?: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>;

const untracked: BodyTracker = (body) => body;

/** The body, calling `release` once it has been read to the end, failed or was cancelled. */
function releasedWhenSent(body: ReadableStream<Uint8Array>, release: () => void, result: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  whenCut(result, release);
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            release();
            controller.close();
          } else {
            controller.enqueue(value);
          }
        } catch (error) {
          release();
          controller.error(error);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The client's address: the socket's peer, or, behind a trusted proxy, the last address the proxy
 * appended to its header (the leftmost entries of X-Forwarded-For come from the client and can be
 * forged; the rightmost is the one the proxy saw).
 */
export function clientAddressOf(request: Request, peer: string | null, trustProxy: string | null): string | null {
  if (trustProxy === null) return peer;
  const header = request.headers.get(trustProxy);
  const entries = (header ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  return entries.at(-1) ?? peer;
}
