/**
 * Turns the payment gate's outcomes into responses, for both paid resources (queries and
 * metadata). The order is fixed by DESIGN.md §6: verify → do the work → settle → record → deliver;
 * the payment lock is always released, and a failure before settlement is never charged.
 */
import { BadRequestError } from "../errors.ts";
import type { GateRequest, PaymentGate } from "../payment/gate.ts";

export interface Delivery {
  /** Builds the 200 response with the given extra headers (PAYMENT-RESPONSE). */
  response(headers: Record<string, string>): Response;
  rows: number | null;
}

export interface PaidRequest extends GateRequest {
  /** Does the work once payment is verified (or reuses work already done for pricing). */
  deliver(): Promise<Delivery>;
  /** The HTTP request's signal: aborted when the client has gone away. */
  signal?: AbortSignal;
}

export async function runPaid(gate: PaymentGate, request: PaidRequest): Promise<Response> {
  const outcome = await gate.check(request);
  if (outcome.kind === "payment-required") return paymentRequired(outcome.body, outcome.headers);
  if (outcome.kind === "free") return (await request.deliver()).response({});
  try {
    const delivery = await request.deliver();
    // A client that left while the work ran would be charged for a response nobody receives:
    // leave the payment unsettled (it stays usable for a retry of the same request).
    if (request.signal?.aborted) {
      throw new BadRequestError("The client closed the connection before the response was ready; nothing was charged.");
    }
    const settled = await outcome.settle({ rows: delivery.rows });
    if (settled.kind === "payment-required") return paymentRequired(settled.body, settled.headers);
    return delivery.response({ "PAYMENT-RESPONSE": settled.paymentResponseHeader });
  } finally {
    outcome.release();
  }
}

function paymentRequired(body: unknown, headers: Record<string, string>): Response {
  return Response.json(body, { status: 402, headers });
}
