/**
 * `GET /api/table/{name}`: the HTTP binding of the table service (service/table-service.ts). It
 * reads the payment from PAYMENT-SIGNATURE and answers the document (with PAYMENT-RESPONSE when
 * paid) or the 402 (to a browser's navigation, as the paywall page: routes/paywall.ts).
 */
import { BadRequestError } from "../errors.ts";
import { decodePaymentSignature, paymentSignatureOf } from "../payment/wire.ts";
import type { VerifyBudget } from "../payment/work.ts";
import type { TableService } from "../service/table-service.ts";
import type { Config } from "../config/types.ts";
import { paymentRequiredResponse, paymentResponseHeaders } from "./x402-headers.ts";
import { paywallResponse, prefersHtml } from "./paywall.ts";
import { tableCheckout } from "../checkout/setup.ts";

export interface TableDeps {
  config: Config;
  tables: TableService;
}

/** `name` is null when the path segment is not valid percent-encoding. */
export async function handleTable(deps: TableDeps, name: string | null, request: Request, verifyBudget?: VerifyBudget): Promise<Response> {
  if (name === null || name === undefined) {
    throw new BadRequestError("The table name in the path is not valid percent-encoding: encode it with encodeURIComponent");
  }
  const url = new URL(request.url);
  const header = paymentSignatureOf(request);
  const answer = await deps.tables.describe({
    name,
    resourceUrl: deps.config.server.baseUrl + url.pathname + url.search,
    // Decoded only once the table is known to exist: an unknown table is a 404 whatever was sent.
    get payment() {
      return header === null ? null : decodePaymentSignature(header);
    },
    signal: request.signal,
    verifyBudget,
  });
  if (answer.kind === "payment-required") {
    if (prefersHtml(request.headers.get("accept"))) {
      return paywallResponse(answer.body, answer.settlement, tableCheckout(deps.config, name), request.method === "HEAD");
    }
    return paymentRequiredResponse(answer.body, answer.settlement);
  }
  return Response.json(answer.document, { headers: paymentResponseHeaders(answer.receipt) });
}
