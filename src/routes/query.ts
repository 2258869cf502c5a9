/**
 * `GET /api/query` (spec "GET /api/query"; DESIGN.md §6): the HTTP binding of the query service.
 * It reads the SQL from the query string and the payment from PAYMENT-SIGNATURE, and turns the
 * service's answer into a response: the Arrow stream (with PAYMENT-RESPONSE when paid) or the 402
 * (its body, and the same JSON in PAYMENT-REQUIRED).
 */
import type { Config, PriceTag } from "../config/types.ts";
import { BadRequestError } from "../errors.ts";
import type { Extensions } from "../payment/extensions.ts";
import { requirementFor, type PaidResource } from "../payment/pricing.ts";
import { PAYMENT_SIGNATURE, decodePaymentSignature } from "../payment/wire.ts";
import type { QueryService } from "../service/query-service.ts";
import { arrowResponse } from "./arrow-response.ts";
import type { BodyTracker } from "./client-limit.ts";
import { checkPaidRetryFits } from "./header-budget.ts";
import { paymentRequiredResponse, paymentResponseHeaders } from "./x402-headers.ts";

/** Longer than any amount a quote can carry (uint256 stays within 78 digits; prices stay far below 10^30). */
const LARGEST_AMOUNT = 10n ** 30n;

export interface QueryRouteDeps {
  config: Config;
  queries: QueryService;
}

/** `track` follows a streamed body until it is sent (the per-client limit, client-limit.ts). */
export async function handleQuery(deps: QueryRouteDeps, request: Request, track?: BodyTracker): Promise<Response> {
  const url = new URL(request.url);
  const sql = readQueryParameter(url);
  const header = request.headers.get(PAYMENT_SIGNATURE);
  const pathAndQuery = url.pathname + url.search;
  const answer = await deps.queries.run({
    sql,
    resourceUrl: deps.config.server.baseUrl + pathAndQuery,
    payment: header === null ? null : decodePaymentSignature(header),
    signal: request.signal,
    // A request that carries a payment fitted; an unpaid one is quoted only if its paid retry will.
    beforeQuote: (resource: PaidResource, tags: PriceTag[], extensions: Extensions) => {
      const offers = tags
        .filter((tag) => tag.type !== "metadata_price")
        .map((tag) => requirementFor(tag, LARGEST_AMOUNT, { maxTimeoutSeconds: deps.config.payment.maxTimeoutSeconds }));
      checkPaidRetryFits(pathAndQuery, resource, offers, extensions);
    },
  });
  if (answer.kind === "payment-required") return paymentRequiredResponse(answer.body, answer.settlement);
  return arrowResponse(answer.result, paymentResponseHeaders(answer.receipt), track);
}

function readQueryParameter(url: URL): string {
  const values = url.searchParams.getAll("query");
  if (values.length === 0 || values[0]!.trim() === "") {
    throw new BadRequestError("Missing 'query' parameter: send the SQL as ?query=SELECT ... (URL-encoded)");
  }
  if (values.length > 1) throw new BadRequestError("Send exactly one 'query' parameter");
  return values[0]!;
}
