/**
 * The one error vocabulary of arrow402. Each class carries its HTTP status; `errorResponse`
 * is the only place that turns an error into a response (ARCHITECTURE.md §8). Expected outcomes
 * (a payment is required, a payment was refused) are values, not exceptions: see payment/core.ts.
 */

export abstract class Arrow402Error extends Error {
  abstract readonly status: number;
  override name = this.constructor.name;

  /** Messages quote what clients sent (a table name, a tool's argument): §8 wants one readable line. */
  constructor(message: string, options?: ErrorOptions) {
    super(oneLine(message), options);
  }
}

/** Control characters and line separators escaped as `\uXXXX`, so that client text cannot break a message into lines. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** 400 text/plain: the request is at fault; the message says what to change. */
export class BadRequestError extends Arrow402Error {
  readonly status = 400;
}

/** The client closed the connection while its answer was being prepared: nothing is sent or charged. */
export class ClientGoneError extends BadRequestError {
  constructor() {
    super("The client closed the connection before the response was ready; nothing was charged.");
  }
}

/** 400 text/plain: the result has more rows than `limits.max_rows` allows; refused, never truncated. */
export class TooManyRowsError extends BadRequestError {
  constructor(
    readonly rows: number,
    readonly max: number,
  ) {
    super(`The result has ${rows} rows, more than the limit of ${max}: add a WHERE condition or a LIMIT of at most ${max}`);
  }
}

/**
 * 400 text/plain: the one answer to any query failure after /verify on a table whose quotes tell
 * nothing about the data (DESIGN.md §17): the time limit, an error on a value, a misfit value, the
 * source's memory, a result too large for the transport. One text, sent no earlier than the time limit would have
 * expired, so neither the words nor the moment tell which failure it was, or what the data holds.
 */
export class PaidQueryFailedError extends BadRequestError {
  constructor(timeLimitMs: number) {
    super(
      `The query did not complete: it ran past the ${timeLimitMs} ms time limit, failed on a value it read, needed more memory than its source allows, or its result was too large to deliver here. ` +
        "Nothing was charged. On this table every failure after payment gets this one answer: narrow the WHERE, lower the LIMIT or simplify the expressions, then retry",
    );
  }
}

/** 404 JSON `{error}` on the table endpoint. */
export class TableNotFoundError extends Arrow402Error {
  readonly status = 404;
  constructor(readonly table: string) {
    super(`Table '${table}' not found`);
  }
}

/**
 * 409 text/plain: a payment-identifier id already names another payment (x402
 * `specs/extensions/payment_identifier.md`: "Same id, different payload → 409 Conflict").
 */
export class PaymentIdConflictError extends Arrow402Error {
  readonly status = 409;
  constructor(readonly paymentId: string) {
    super(
      `The payment-identifier id '${paymentId}' was already used with another payment: reuse an id only to resend the very same payment, and give a new payment a new id.`,
    );
  }
}

/**
 * 406 text/plain: the request's `Accept` header (or `?format=`) names no format this server makes;
 * the message lists the ones it can (ARCHITECTURE.md §13).
 */
export class NotAcceptableError extends Arrow402Error {
  readonly status = 406;
}

/** 401 text/plain with WWW-Authenticate: the request needs credentials it did not send (GET /metrics with server.metrics_token). */
export class UnauthorizedError extends Arrow402Error {
  readonly status = 401;
}

/** 403 text/plain: the credentials sent are not the ones required. */
export class ForbiddenError extends Arrow402Error {
  readonly status = 403;
}

/** 500 text/plain: the server's fault (database, encoding, facilitator). No stack trace is sent. */
export class ServerError extends Arrow402Error {
  readonly status = 500;
}

/**
 * 500: a stored value does not fit its column's declared type (ARCHITECTURE.md §5). The client is told
 * where (table, column, rowid), never the value: it may be a secret of a row the client has not
 * paid for. The value is in `detail`, for the operator (server log, `arrow402 validate`).
 */
export class ValueDoesNotFitError extends ServerError {
  /** The same sentence with the offending value, for the operator only. */
  readonly operatorMessage: string;
  constructor(
    readonly table: string,
    readonly column: string,
    readonly rowid: number | bigint | null,
    readonly detail: string,
  ) {
    const where = `Value in table '${table}', column '${column}'` + (rowid === null ? "" : `, rowid ${rowid}`);
    const fix = "Fix the data or the column's declared type (run 'arrow402 validate').";
    super(`${where} does not fit its declared type. ${fix}`);
    this.operatorMessage = `${where} does not fit its declared type: ${detail}. ${fix}`;
  }
}

/** 500: the facilitator could not be reached, timed out, failed or answered nonsense. */
export class FacilitatorError extends ServerError {}

/** 405 text/plain with Allow: the path is served, but not for this method. */
export class MethodNotAllowedError extends Arrow402Error {
  readonly status = 405;
  constructor(
    method: string,
    path: string,
    readonly allow: string,
  ) {
    super(`${method} ${path} is not served: send a GET request`);
  }
}

/** 429 text/plain with Retry-After: this client already runs as many queries as it may (limits.max_concurrent_per_client). */
export class TooManyRequestsError extends Arrow402Error {
  readonly status = 429;

  constructor(
    message: string,
    /** Retry-After: when the client may expect room again. */
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
  }
}

/** 503 text/plain with Retry-After: every query worker stayed busy for a whole query time limit; the client retries. */
export class ServerBusyError extends Arrow402Error {
  readonly status = 503;
  constructor(
    message: string,
    /** Retry-After: when the client may expect room again. */
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
  }
}

/**
 * 503 with Retry-After: a paid result could not be held until its payment is settled (no room in
 * `limits.spill_budget_mb`, or its temporary file failed; results/held-result.ts). Before settlement
 * nothing was charged; a settled payment presented again says so instead (payment/replays.ts).
 */
export class ResultNotHeldError extends ServerBusyError {
  constructor(message = "The server cannot hold this result until its payment is settled right now; nothing was charged: retry in 30 seconds, or ask for fewer rows.") {
    super(message, 30);
  }
}

/**
 * 503 text/plain with Retry-After: the payment ledger (PostgreSQL, `ledger.url`) cannot be reached,
 * so no payment can be taken or served again; nothing was charged (ARCHITECTURE.md §11 "Replicas").
 */
export class LedgerUnavailableError extends Arrow402Error {
  readonly status = 503;
  constructor(options?: ErrorOptions) {
    super("The payment ledger cannot be reached right now, so no payment can be taken; nothing was charged: retry in a few seconds.", options);
  }
}

/** 503 text/plain: dashboards are configured but the landing page has not been generated. */
export class DashboardsNotGeneratedError extends Arrow402Error {
  readonly status = 503;
  constructor() {
    super("Dashboards are configured but not generated yet: run 'arrow402 dashboards' to build them.");
  }
}

/** Thrown while loading configuration: every problem at once, each with its config path. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

const TEXT = { "content-type": "text/plain; charset=utf-8" };

/** Maps any thrown value to a response. Unknown errors become a 500 without internals. */
export function errorResponse(error: unknown): Response {
  if (error instanceof TableNotFoundError) {
    return Response.json({ error: error.message }, { status: 404 });
  }
  if (error instanceof TooManyRequestsError) {
    return new Response(error.message, { status: 429, headers: { ...TEXT, "retry-after": String(error.retryAfterSeconds) } });
  }
  if (error instanceof ServerBusyError) {
    return new Response(error.message, { status: error.status, headers: { ...TEXT, "retry-after": String(error.retryAfterSeconds) } });
  }
  if (error instanceof LedgerUnavailableError) {
    return new Response(error.message, { status: error.status, headers: { ...TEXT, "retry-after": "1" } });
  }
  if (error instanceof MethodNotAllowedError) {
    return new Response(error.message, { status: 405, headers: { ...TEXT, allow: error.allow } });
  }
  if (error instanceof UnauthorizedError) {
    return new Response(error.message, { status: 401, headers: { ...TEXT, "www-authenticate": 'Bearer realm="arrow402"' } });
  }
  if (error instanceof ValueDoesNotFitError) console.error(`arrow402: ${error.operatorMessage}`);
  if (error instanceof Arrow402Error) {
    return new Response(error.message, { status: error.status, headers: TEXT });
  }
  console.error("arrow402: unexpected error:", error);
  return new Response("Internal server error", { status: 500, headers: TEXT });
}
