/**
 * The buyer's x402 V2 flow, kept explicit so that choice and budget are enforced in one place:
 * GET → 402 → decide (choose an offer, check the budget, sign) → the same GET with
 * PAYMENT-SIGNATURE → 200 with the data and PAYMENT-RESPONSE.
 *
 * A paid request whose answer is lost (connection refused, reset, cut mid-body) is sent again
 * with the identical header, a few times with backoff: the server serves a settled payment again
 * for the same resource before its validBefore (ARCHITECTURE.md §6 replay rule), so the buyer recovers
 * the data without paying twice, and a payment not yet settled is simply processed then.
 *
 * Every request names the media type wanted (`Accept`; the price and the paid resource are the
 * same in every format, ARCHITECTURE.md §13) and accepts compression (http.ts). A quote for another
 * media type than the one asked for is not paid: the server could not deliver what was wanted.
 *
 * The data is read under `maxBytes` and, with `toFile`, written to that file as it arrives
 * (DESIGN §17); an answer refused for its size is not sent for again, since the same server
 * would send the same bytes.
 */
import type { PaymentRequired, SettleResponse } from "@x402/core/types";
import { PAYMENT_MESSAGES } from "../payment/messages.ts";
import { PAYMENT_SIGNATURE } from "../payment/wire.ts";
import { failure, type Failure } from "./failure.ts";
import { errorText, send, type Answer, type SendOptions } from "./http.ts";
import type { Offer } from "./offers.ts";
import { readPaymentRequired, readPaymentResponse } from "./payment-required.ts";

export type Decision = { pay: true; offer: Offer; header: string } | { pay: false; failure: Failure };

export interface PaidFetchOptions {
  /** The media type wanted, sent as `Accept` with every request; without it, the server's default. */
  accept?: string;
  decide(required: PaymentRequired): Promise<Decision>;
  onProgress?: (bytes: number) => void;
  /** Waits before each resend of a paid request whose answer was lost. */
  retryDelaysMs?: readonly number[];
  /** Called before each resend, to tell the user. */
  onRetry?: (attempt: number, reason: string) => void;
  /** Most bytes of the data, as sent and once decompressed (http.ts; default DEFAULT_MAX_BYTES). */
  maxBytes?: number;
  /** Said after a refusal for size: how to allow a larger answer. */
  overBoundAdvice?: string;
  /** The data is written here as it arrives (emptied for each answer, http.ts), and `body` is left empty. */
  toFile?: string;
}

export interface Payment {
  offer: Offer;
  /** The decoded PAYMENT-RESPONSE, or null when the server sent none. */
  receipt: SettleResponse | null;
  /** Resends needed after a lost answer. */
  resends: number;
}

export type PaidFetch =
  | { ok: true; body: Uint8Array; contentType: string | null; wireBytes: number; payment: Payment | null }
  | { ok: false; failure: Failure };

export const DEFAULT_RETRY_DELAYS_MS = [500, 1500, 3000] as const;

export async function fetchPaid(url: string, options: PaidFetchOptions): Promise<PaidFetch> {
  const first = await send(url, sendOptions(options, acceptHeader(options)));
  if (!first.ok) return { ok: false, failure: first.lost ? failure("network", first.reason) : failure("runtime", `${first.reason}; nothing was written`) };
  const { answer } = first;
  if (answer.status !== 402) return unpaidAnswer(answer);

  const read = readPaymentRequired(answer.headers, answer.body);
  if (!read.ok) return { ok: false, failure: failure("runtime", read.reason) };
  const quoted = read.required.resource.mimeType;
  if (options.accept !== undefined && quoted !== undefined && mediaType(quoted) !== options.accept) {
    return {
      ok: false,
      failure: failure("declined", `not paid: the server quotes this query as ${quoted.slice(0, 100)}, not ${options.accept} as asked; nothing was paid`),
    };
  }
  const decision = await options.decide(read.required);
  if (!decision.pay) return { ok: false, failure: decision.failure };
  return sendPayment(url, decision.offer, decision.header, options);
}

async function sendPayment(url: string, offer: Offer, header: string, options: PaidFetchOptions): Promise<PaidFetch> {
  const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  let lastReason = "";
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) {
      options.onRetry?.(attempt, lastReason);
      await Bun.sleep(delays[attempt - 1]!);
    }
    const sent = await send(url, sendOptions(options, { ...acceptHeader(options), [PAYMENT_SIGNATURE]: header }));
    if (!sent.ok && !sent.lost) {
      const note = "nothing was written; the payment was sent and may have been settled: check the payer's transfers";
      return { ok: false, failure: failure("runtime", `${sent.reason}; ${note}`) };
    }
    if (!sent.ok) {
      lastReason = sent.reason;
      continue;
    }
    const { answer } = sent;
    // A resend that finds the first request still being processed waits for it (§6 races).
    if (attempt > 0 && answer.status === 402 && paymentRequiredError(answer) === PAYMENT_MESSAGES.inUse) {
      lastReason = "the payment was still being processed";
      continue;
    }
    return paidAnswer(answer, offer, attempt);
  }
  return {
    ok: false,
    failure: failure(
      "network",
      `${lastReason} after the payment was sent (${delays.length} resends); it may have been settled: ` +
        `check the payer's transfers before paying again`,
    ),
  };
}

function sendOptions(options: PaidFetchOptions, headers: Record<string, string>): SendOptions {
  const { onProgress, maxBytes, overBoundAdvice, toFile } = options;
  return { headers, onProgress, maxBytes, overBoundAdvice, toFile };
}

function acceptHeader(options: PaidFetchOptions): Record<string, string> {
  return options.accept === undefined ? {} : { accept: options.accept };
}

/** A media type without its parameters, lowercased: `text/csv; header=present` → `text/csv`. */
export function mediaType(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

function delivered(answer: Answer, payment: Payment | null): PaidFetch {
  return { ok: true, body: answer.body, contentType: answer.headers.get("content-type"), wireBytes: answer.wireBytes, payment };
}

function unpaidAnswer(answer: Answer): PaidFetch {
  if (answer.status === 200) return delivered(answer, null);
  return { ok: false, failure: httpFailure(answer) };
}

function paidAnswer(answer: Answer, offer: Offer, resends: number): PaidFetch {
  const receipt = readPaymentResponse(answer.headers);
  if (answer.status === 200) return delivered(answer, { offer, receipt, resends });
  if (answer.status === 402) {
    const reason = paymentRequiredError(answer) ?? receipt?.errorReason ?? "no reason given";
    return { ok: false, failure: failure("refused", `payment refused: ${reason}`) };
  }
  return { ok: false, failure: httpFailure(answer) };
}

function httpFailure(answer: Answer): Failure {
  const text = errorText(answer);
  if (answer.status === 400) return failure("bad-query", text);
  if (answer.status >= 500) return failure("server", `server error (${answer.status}): ${text}`);
  if (answer.status === 404) return failure("runtime", `not found (404): is this the address of an arrow402 server?`);
  if (answer.status === 406) return failure("runtime", `the server cannot send this format (406): ${text}`);
  return failure("runtime", `unexpected answer ${answer.status}: ${text}`);
}

function paymentRequiredError(answer: Answer): string | null {
  const read = readPaymentRequired(answer.headers, answer.body);
  return read.ok ? (read.required.error ?? null) : null;
}
