/**
 * Log lines built from events (ARCHITECTURE.md §11 "Operations"): one line per request and per payment,
 * and the server's lifecycle. `server.log: json` writes one JSON object per line on stdout for log
 * collectors; `text` (the default) writes readable lines, warnings and errors on stderr.
 *
 * Nothing secret reaches a line: events carry no headers, no signatures and no credentials, and
 * the messages they carry (facilitator failures, ledger errors, config problems) already name URLs
 * without credentials or query strings.
 */
import type { LogFormat } from "../config/types.ts";
import type { OpsEvent } from "./events.ts";

type Level = "info" | "warn" | "error";
type Fields = Record<string, unknown>;

interface LogRecord {
  level: Level;
  event: string;
  fields: Fields;
  /** Text format only: the line's lead, before the key=value pairs, and the fields it already shows. */
  lead?: string;
  inLead?: string[];
  /** Text format only: lines printed under the record (e.g. every config problem). */
  details?: string[];
}

export interface LogSink {
  out(line: string): void;
  err(line: string): void;
  /** Writes out what is buffered (after an error line, and before the process exits). */
  flush?(): void;
}

/**
 * stdout and stderr, each written once per turn of the event loop: one system call for all the
 * lines of that turn rather than one per request.
 */
class BufferedStdio implements LogSink {
  private readonly pending = { out: [] as string[], err: [] as string[] };
  private scheduled = false;

  readonly out = (line: string) => this.add("out", line);
  readonly err = (line: string) => this.add("err", line);

  readonly flush = () => {
    this.scheduled = false;
    const { out, err } = this.pending;
    if (out.length > 0) process.stdout.write(`${out.splice(0).join("\n")}\n`);
    if (err.length > 0) process.stderr.write(`${err.splice(0).join("\n")}\n`);
  };

  private add(stream: "out" | "err", line: string): void {
    this.pending[stream].push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }
}

export const STDIO: LogSink = new BufferedStdio();

/** Writes out the log lines still buffered (the process is about to exit). */
export function flushLogs(): void {
  STDIO.flush?.();
}

/** Free text from outside (a facilitator's reason) is cut to this length. */
const MAX_DETAIL_CHARS = 300;

export function createLogger(options: { format: () => LogFormat; sink?: LogSink; now?: () => Date }): (event: OpsEvent) => void {
  const sink = options.sink ?? STDIO;
  const now = options.now ?? (() => new Date());
  const clock = options.now === undefined ? isoClock() : () => now().toISOString();
  return (event) => {
    // One line per request: the hot path, written directly (same text as the general path below).
    if (event.type === "request.finished") {
      sink.out(options.format() === "json" ? requestJson(clock(), event) : requestText(clock(), event));
      return;
    }
    const record = recordOf(event);
    if (record === null) return;
    const time = clock();
    if (options.format() === "json") {
      sink.out(JSON.stringify({ time, level: record.level, event: record.event, ...record.fields }, jsonValue));
    } else {
      const write = record.level === "info" ? sink.out : sink.err;
      const pairs = Object.entries(record.fields)
        .filter(([key, value]) => value !== null && value !== undefined && !Array.isArray(value) && !record.inLead?.includes(key))
        .map(([key, value]) => `${key}=${textValue(value)}`);
      write([time, record.level.padEnd(5), record.lead ?? record.event, ...pairs].join(" "));
      for (const detail of record.details ?? []) write(`  ${detail}`);
    }
    // An error (a ledger alert) is written at once: the process may not live to the next turn.
    if (record.level === "error") sink.flush?.();
  };
}

type RequestFinished = Extract<OpsEvent, { type: "request.finished" }>;

/** `{"time":…,"level":"info","event":"request",…}`: the keys in the order the general path writes them. */
function requestJson(time: string, event: RequestFinished): string {
  const { method, path, status, route, client, table, rows, bytes, complete } = event;
  const fields: Fields = { time, level: "info", event: "request", method, route, path, status, duration_ms: Math.round(event.durationMs * 10) / 10, client, table, rows, bytes };
  if (!complete) fields.complete = false;
  return JSON.stringify(fields, jsonValue);
}

/** `time info  METHOD path status Nms route=… client=…`, fields without a value left out. */
function requestText(time: string, event: RequestFinished): string {
  const duration = Math.round(event.durationMs * 10) / 10;
  let line = `${time} info  ${event.method} ${textValue(event.path)} ${event.status} ${duration}ms route=${textValue(event.route)}`;
  if (event.client !== null && event.client !== undefined) line += ` client=${textValue(event.client)}`;
  if (event.table !== null && event.table !== undefined) line += ` table=${textValue(event.table)}`;
  if (event.rows !== null && event.rows !== undefined) line += ` rows=${event.rows}`;
  if (event.bytes !== null && event.bytes !== undefined) line += ` bytes=${event.bytes}`;
  if (!event.complete) line += " complete=false";
  return line;
}

/** ISO-8601 timestamps, the text made once per millisecond (a busy server logs many lines per ms). */
function isoClock(): () => string {
  let ms = -1;
  let text = "";
  return () => {
    const now = Date.now();
    if (now !== ms) {
      ms = now;
      text = new Date(now).toISOString();
    }
    return text;
  };
}

function recordOf(event: OpsEvent): LogRecord | null {
  switch (event.type) {
    case "request.finished":
      return null; // written by requestText / requestJson
    case "payment.settled": {
      const { table, network, asset, amount, rows, payer, transaction, via } = event;
      return { level: "info", event: "payment", fields: { table, network, asset, amount, rows, payer, transaction, via } };
    }
    case "payment.refused":
      // An unpaid request's quote is the request line's 402; only refused payments say more.
      if (event.reason === "required") return null;
      return { level: "info", event: "payment.refused", fields: { table: event.table, reason: event.reason, detail: cut(event.detail) } };
    case "facilitator.error":
      return { level: "warn", event: "facilitator.error", fields: { endpoint: event.endpoint, message: event.message } };
    case "payment.claim-lost":
      return {
        level: "warn",
        event: "payment.claim_lost",
        lead: "a payment's claim ran out while its request worked (this process or the ledger stalled longer than the claim's lease) and another request may have taken it over",
        fields: { table: event.table, payment_key: event.paymentKey },
      };
    case "ledger.alert":
      return {
        level: "error",
        event: "ledger.alert",
        lead: "LEDGER ALERT: a settled payment is not in the ledger; record it by hand",
        fields: { transaction: event.transaction, payment_key: event.paymentKey, message: event.message },
      };
    case "server.started":
      return { level: "info", event: "server.started", lead: event.message, inLead: ["message"], fields: { message: event.message } };
    case "config.reloaded":
      return {
        level: event.needsRestart.length > 0 ? "warn" : "info",
        event: "config.reloaded",
        lead: `config reloaded from ${event.source}`,
        inLead: ["source"],
        fields: { source: event.source, changed: event.changed, needs_restart: event.needsRestart },
        details: [
          ...(event.changed.length > 0 ? [`applied: ${event.changed.join(", ")}`] : ["applied: nothing changed"]),
          ...event.needsRestart.map((path) => `${path}: changed in the file but needs a restart; still running with the old value`),
        ],
      };
    case "config.rejected":
      return {
        level: "error",
        event: "config.rejected",
        lead: `config reload from ${event.source} refused (${event.problems.length} problem${event.problems.length === 1 ? "" : "s"}); still serving the previous config`,
        inLead: ["source"],
        fields: { source: event.source, problems: event.problems },
        details: event.problems,
      };
    case "shutdown.started":
      return { level: "info", event: "shutdown.started", fields: { signal: event.signal, in_flight: event.inFlight, deadline_ms: event.deadlineMs } };
    case "shutdown.finished":
      return { level: event.cut > 0 ? "warn" : "info", event: "shutdown.finished", fields: { cut: event.cut } };
    case "readiness.changed":
      return {
        level: event.ready ? "info" : "warn",
        event: "readiness.changed",
        lead: event.ready ? "ready" : "not ready",
        inLead: ["ready", "failing"],
        fields: { ready: event.ready, failing: event.failing },
        details: Object.entries(event.failing).map(([check, reason]) => `${check}: ${reason}`),
      };
  }
}

function cut(text: string): string {
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}

function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** Plain when it is one printable word; else quoted as JSON, so a value cannot forge a line or a field. */
function textValue(value: unknown): string {
  const text = typeof value === "object" ? JSON.stringify(value, jsonValue) : String(value);
  return /^[\x21-\x7e]+$/.test(text) && !text.includes('"') ? text : JSON.stringify(text);
}
