/**
 * The events operations observe (ARCHITECTURE.md §9 "Operations observe typed events", §11): the payment core's
 * typed events, one event per finished request (request-events.ts), and the server's own
 * lifecycle (reloads, shutdown, readiness). Logging and metrics are subscribers of one bus, so
 * the routes and the payment core only ever emit values and never call a logger or a counter.
 */
import type { PaymentEvent } from "../payment/events.ts";

export interface RequestEvent {
  type: "request.finished";
  /** When the request arrived. */
  time: Date;
  method: string;
  /** A fixed label (routes.ts), never the raw path: metrics stay bounded whatever clients send. */
  route: string;
  /** The path as received (without the query string), cut to a bounded length. */
  path: string;
  status: number;
  /** From arrival to the last byte of the body handed to the connection (or its end by error or cancel). */
  durationMs: number;
  /** The client's address (the socket's peer, or the trusted proxy's header); null when unknown. */
  client: string | null;
  /** The configured table a query or a table document was about. */
  table: string | null;
  /** Rows delivered, when known (a query's data response sent to its end). */
  rows: number | null;
  /** Body bytes handed to the connection (before any Content-Encoding), when known. */
  bytes: number | null;
  /** False when the body ended early: the client went away or the stream failed. */
  complete: boolean;
}

export type ServerEvent =
  | { type: "server.started"; message: string }
  | { type: "config.reloaded"; source: string; changed: string[]; needsRestart: string[] }
  | { type: "config.rejected"; source: string; problems: string[] }
  | { type: "shutdown.started"; signal: string; inFlight: number; deadlineMs: number }
  | { type: "shutdown.finished"; cut: number }
  | { type: "readiness.changed"; ready: boolean; failing: Record<string, string> };

export type OpsEvent = PaymentEvent | RequestEvent | ServerEvent;

export type OpsEventSink = (event: OpsEvent) => void;

/**
 * Delivers every event to every subscriber, synchronously and in order. A subscriber that throws
 * is reported once on stderr and never breaks the request or the payment that emitted the event.
 */
export class EventBus {
  private readonly subscribers: OpsEventSink[] = [];
  private reported = false;

  subscribe(subscriber: OpsEventSink): () => void {
    this.subscribers.push(subscriber);
    return () => {
      const index = this.subscribers.indexOf(subscriber);
      if (index >= 0) this.subscribers.splice(index, 1);
    };
  }

  readonly emit = (event: OpsEvent): void => {
    for (const subscriber of this.subscribers) {
      try {
        subscriber(event);
      } catch (error) {
        if (this.reported) continue;
        this.reported = true;
        console.error(`arrow402: an operations subscriber failed on ${event.type}: ${(error as Error).message}`);
      }
    }
  };
}
