/**
 * `GET /api/query` (spec "GET /api/query"; ARCHITECTURE.md §6, §13): the HTTP binding of the query
 * service. It reads the SQL from the query string, the payment from PAYMENT-SIGNATURE, the format
 * from `Accept` or `?format=` and the compression from `Accept-Encoding`, and turns the service's
 * answer into a response: the result (with PAYMENT-RESPONSE when paid) or the 402 (its body, and
 * the same JSON in PAYMENT-REQUIRED). The paid resource is the canonical URL of the SQL
 * (service/resource-url.ts): a query costs the same and is paid once whatever form it is delivered
 * in, and however its URL was encoded. A browser's navigation gets the 402 as the paywall page
 * (routes/paywall.ts, ARCHITECTURE.md §15).
 */
import type { Config, PriceTag } from "../config/types.ts";
import { BadRequestError } from "../errors.ts";
import type { Extensions } from "../payment/extensions.ts";
import { requirementFor, type PaidResource } from "../payment/pricing.ts";
import { decodePaymentSignature, paymentSignatureOf } from "../payment/wire.ts";
import type { VerifyBudget } from "../payment/work.ts";
import type { QueryService } from "../service/query-service.ts";
import { httpQueryUrl } from "../service/resource-url.ts";
import { negotiateFormat } from "../formats/negotiate.ts";
import type { BodyTracker } from "./client-limit.ts";
import { MIN_COMPRESSED_BYTES, MIN_COMPRESSED_PAID_BYTES, negotiateCoding } from "./content-coding.ts";
import { resultResponse, type ResultResponseOptions } from "./result-response.ts";
import { checkPaidRetryFits } from "./header-budget.ts";
import { paymentRequiredResponse, paymentResponseHeaders } from "./x402-headers.ts";
import { paywallResponse, prefersHtml } from "./paywall.ts";
import { queryCheckout } from "../checkout/setup.ts";

/** Longer than any amount a quote can carry (uint256 stays within 78 digits; prices stay far below 10^30). */
const LARGEST_AMOUNT = 10n ** 30n;

export interface QueryRouteDeps {
  config: Config;
  queries: QueryService;
  /** How answers wait for their clients (results/sent-body.ts). */
  sending?: ResultResponseOptions["sending"];
}

/** `track` follows a streamed body until it is sent (the per-client limit, client-limit.ts). */
export async function handleQuery(deps: QueryRouteDeps, request: Request, track?: BodyTracker, verifyBudget?: VerifyBudget): Promise<Response> {
  const url = new URL(request.url);
  const sql = readQueryParameter(url);
  const format = negotiateFormat(request.headers.get("accept"), readFormatParameter(url));
  if (format instanceof Error) throw format;
  const header = paymentSignatureOf(request);
  const pathAndQuery = url.pathname + url.search;
  const answer = await deps.queries.run({
    sql,
    format,
    // Built only for a paid table (a free query never reads it).
    get resourceUrl() {
      return httpQueryUrl(deps.config.server.baseUrl, sql);
    },
    // Decoded only once the SQL is valid (ARCHITECTURE.md §6 step 1): a bad query is named first.
    get payment() {
      return header === null ? null : decodePaymentSignature(header);
    },
    signal: request.signal,
    verifyBudget,
    // A request that carries a payment fitted; an unpaid one is quoted only if its paid retry will:
    // its request line repeats this request's URL, its payload the (canonical) resource.
    beforeQuote: (resource: PaidResource, tags: PriceTag[], extensions: Extensions) => {
      const offers = tags
        .filter((tag) => tag.type !== "metadata_price")
        .map((tag) => requirementFor(tag, LARGEST_AMOUNT, { maxTimeoutSeconds: deps.config.payment.maxTimeoutSeconds }));
      checkPaidRetryFits(pathAndQuery, resource, offers, extensions);
    },
  });
  if (answer.kind === "payment-required") {
    if (prefersHtml(request.headers.get("accept"))) {
      const setup = queryCheckout(deps.config, "", sql, format.name);
      return paywallResponse(answer.body, answer.settlement, setup, request.method === "HEAD");
    }
    return paymentRequiredResponse(answer.body, answer.settlement);
  }
  return resultResponse(answer.result, {
    format: answer.format,
    coding: negotiateCoding(request.headers.get("accept-encoding")),
    headers: paymentResponseHeaders(answer.receipt),
    track,
    minCompressedBytes: answer.receipt === null ? MIN_COMPRESSED_BYTES : MIN_COMPRESSED_PAID_BYTES,
    head: request.method === "HEAD",
    sending: deps.sending,
    paid: answer.receipt !== null,
  });
}

function readQueryParameter(url: URL): string {
  const values = url.searchParams.getAll("query");
  if (values.length === 0 || values[0]!.trim() === "") {
    throw new BadRequestError("Missing 'query' parameter: send the SQL as ?query=SELECT ... (URL-encoded)");
  }
  if (values.length > 1) throw new BadRequestError("Send exactly one 'query' parameter");
  // URLSearchParams keeps a malformed escape as `%` (`%ZZ`) or U+FFFD (bytes that are not UTF-8),
  // which would reach the dialect as a puzzling syntax error. Only then is the raw text looked at.
  const raw = /[%\uFFFD]/.test(values[0]!) ? url.search.slice(1).split("&").find((pair) => parameterName(pair) === "query") : undefined;
  if (raw !== undefined && percentDecoded(raw.slice(raw.indexOf("=") + 1)) === null) {
    throw new BadRequestError("The 'query' parameter is not valid percent-encoding (UTF-8, '%' followed by two hex digits): URL-encode the SQL, e.g. with encodeURIComponent");
  }
  return values[0]!;
}

/** `?format=`, at most once (null when absent). */
function readFormatParameter(url: URL): string | null {
  const values = url.searchParams.getAll("format");
  if (values.length > 1) throw new BadRequestError("Send at most one 'format' parameter");
  return values[0] ?? null;
}

/** A query-string component decoded (`+` is a space), or null when it is not valid percent-encoding of UTF-8. */
function percentDecoded(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded.replaceAll("+", " "));
  } catch {
    return null;
  }
}

function parameterName(pair: string): string {
  const raw = pair.split("=")[0]!;
  return percentDecoded(raw) ?? raw; // not valid percent-encoding: not `format` or `query` either
}
