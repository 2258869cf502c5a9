/**
 * One `request.finished` event per request, emitted exactly once (ARCHITECTURE.md §9, §11): when the
 * handler's response has been handed over and, for a streamed body, when that body has been read to
 * its end, failed, or been cancelled by the client — so durations and byte counts are those of the
 * whole response. Handlers add what they know through RequestFacts.
 *
 * Bytes: a streamed body is counted as it leaves, through the route's tracker; a complete query
 * result's size is known from its chunks; any other body is measured from a clone once the response
 * is handed over (buffers and files: no copy, no read). A route that streams a large body must pass
 * it through its tracker: a clone of a stream would keep reading it after the client has gone.
 */
import type { RequestEvent } from "./events.ts";
import { whenCut } from "../results/result-stream.ts";
import { RequestFacts } from "./request-facts.ts";

/** Paths in events are cut to this many characters: a hostile URL cannot make log lines huge. */
const MAX_PATH_CHARS = 256;

export interface RequestObserverOptions {
  emit: (event: RequestEvent) => void;
  /** The route label of a path (routes.ts). */
  route: (pathname: string) => string;
  client: (request: Request) => string | null;
  /**
   * Called once the response has been handed over with `bytesToSend` body bytes still to send, or
   * once a streamed body has ended (0): the connection's keep-alive time starts (keep-alive.ts).
   */
  handedOver?: (request: Request, bytesToSend: number) => void;
  /** Called when a streamed result is cut by the send timeout: its connection is to be closed. */
  cutOff?: (request: Request) => void;
}

export interface RequestObserver {
  handle(request: Request): Promise<Response>;
  /** The facts of a request being handled (a fresh, unobserved record for any other request). */
  factsOf(request: Request): RequestFacts;
}

export function observeRequests(handler: (request: Request) => Response | Promise<Response>, options: RequestObserverOptions): RequestObserver {
  const facts = new WeakMap<Request, RequestFacts>();
  return {
    factsOf: (request) => facts.get(request) ?? new RequestFacts(),
    async handle(request) {
      const time = new Date();
      const started = performance.now();
      const noted = new RequestFacts();
      facts.set(request, noted);
      // Read now: once a streamed body ends, the socket (and so its peer address) may be gone.
      const client = options.client(request);
      noted.client = client;
      let emitted = false;
      const finish = (status: number, bytes: number | null, complete: boolean) => {
        if (emitted) return;
        emitted = true;
        const pathname = pathOf(request.url);
        options.emit({
          type: "request.finished",
          time,
          method: request.method,
          route: options.route(pathname),
          path: pathname.length > MAX_PATH_CHARS ? `${pathname.slice(0, MAX_PATH_CHARS)}…` : pathname,
          status,
          durationMs: performance.now() - started,
          client,
          table: noted.table,
          rows: complete ? noted.rows : null,
          bytes,
          complete,
        });
      };
      let response: Response;
      try {
        response = await handler(request);
      } catch (error) {
        finish(500, null, false);
        options.handedOver?.(request, 0);
        throw error;
      }
      const counted = noted.counted;
      // The tracked body is the response's, possibly wrapped (e.g. compressed) after tracking: its
      // end (or cancel) ends the request. A clone would read a stream the client has abandoned.
      if (counted !== null && response.status === 200) {
        counted.onEnd((bytes, complete) => {
          finish(response.status, bytes, complete);
          // The stream has ended, but its last chunk may not have been sent yet.
          options.handedOver?.(request, counted.lastChunkBytes);
        });
        // Cut by the send timeout: ended now, and the connection closed, though the client pulls nothing.
        if (noted.result !== null) whenCut(noted.result, () => (counted.endNow(), options.cutOff?.(request)));
        return response;
      }
      // Any other body is handed over whole. A result's size is known now; another body's once
      // measured, and then its time to send is set again if it is still being sent.
      options.handedOver?.(request, response.status === 200 ? (noted.completeBytes ?? 0) : 0);
      if (noted.completeBytes !== null && response.status === 200) {
        finish(200, noted.completeBytes, true);
      } else {
        sizeOf(response).then(
          (bytes) => {
            finish(response.status, bytes, true);
            if (bytes > 0) options.handedOver?.(request, bytes);
          },
          () => finish(response.status, null, false),
        );
      }
      return response;
    },
  };
}

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.indexOf("?", start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

/** The body's size from a clone (reading `response.body` itself would turn a buffer into a stream). */
async function sizeOf(response: Response): Promise<number> {
  return (await response.clone().blob()).size;
}
