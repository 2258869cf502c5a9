/**
 * What the handlers learn about a request while answering it (its table, its rows, its streamed
 * body), kept beside the request and read once it has finished (request-events.ts). Handlers
 * never log or count: they only note facts, here, through two seams the query route already has
 * (its query service and its body tracker).
 */
import { rowsOfBody } from "../results/result-stream.ts";
import type { BodyTracker } from "../routes/client-limit.ts";
import type { QueryService } from "../service/query-service.ts";

export class RequestFacts {
  /** The configured table the request was about. */
  table: string | null = null;
  /** The client's address, read once when the request arrived (undefined: not observed). */
  client: string | null | undefined = undefined;
  /** Rows and body bytes of a result known before it was sent (a complete result). */
  private knownRows: number | null = null;
  private knownBytes: number | null = null;
  /** A streamed result's own body: its row count is known once it has ended. */
  private resultBody: ReadableStream<Uint8Array> | null = null;
  /** The response body as counted on its way out, when it streams. */
  counted: CountedBody | null = null;

  /** Body bytes of a complete query result (sent as its chunks in one buffer); null otherwise. */
  get completeBytes(): number | null {
    return this.knownBytes;
  }

  /** The streamed result's own body (before any wrapping), or null. */
  get result(): ReadableStream<Uint8Array> | null {
    return this.resultBody;
  }

  /** Rows delivered; null while unknown. */
  get rows(): number | null {
    if (this.knownRows !== null) return this.knownRows;
    return this.resultBody === null ? null : (rowsOfBody(this.resultBody) ?? null);
  }

  /** The query service, noting the table and rows of every answer it gives for this request. */
  noting(queries: QueryService): QueryService {
    return {
      run: async (request) => {
        const answer = await queries.run(request);
        if (answer.kind === "data") {
          this.table = answer.table;
          if ("body" in answer.result) {
            this.resultBody = answer.result.body;
          } else {
            this.knownRows = answer.result.rows;
            this.knownBytes = answer.result.complete.reduce((sum, chunk) => sum + chunk.byteLength, 0);
          }
        }
        return answer;
      },
    };
  }

  /** The route's body tracker, followed by a count of the bytes that leave. */
  tracking(track: BodyTracker): BodyTracker {
    return (body, result) => {
      this.counted = new CountedBody(track(body, result));
      return this.counted.stream;
    };
  }
}

/** A body that counts its bytes and says once how it ended: read to the end, failed or cancelled. */
export class CountedBody {
  readonly stream: ReadableStream<Uint8Array>;
  private bytes = 0;
  /** The size of the last chunk handed on: what may still be unsent when the body ends. */
  lastChunkBytes = 0;
  private ended: boolean | null = null;
  private listener: ((bytes: number, complete: boolean) => void) | null = null;

  constructor(body: ReadableStream<Uint8Array>) {
    const reader = body.getReader();
    this.stream = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            const { done, value } = await reader.read();
            if (done) {
              controller.close();
              this.end(true);
            } else {
              this.bytes += value.byteLength;
              this.lastChunkBytes = value.byteLength;
              controller.enqueue(value);
            }
          } catch (error) {
            controller.error(error);
            this.end(false);
          }
        },
        cancel: (reason) => {
          this.end(false);
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** The body will not complete (it was cut): it ends now, incomplete, whether or not it is pulled again. */
  endNow(): void {
    this.end(false);
  }

  /** Calls `listener` when the body ends (at once if it already has). */
  onEnd(listener: (bytes: number, complete: boolean) => void): void {
    if (this.ended === null) this.listener = listener;
    else listener(this.bytes, this.ended);
  }

  private end(complete: boolean): void {
    if (this.ended !== null) return;
    this.ended = complete;
    this.listener?.(this.bytes, complete);
  }
}
