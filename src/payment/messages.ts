/** The `error` sentences of 402 bodies (ARCHITECTURE.md §8): what happened and what the client should do. */

const SIGN = "sign one of the offers in `accepts` with an x402 V2 client and send the request again with that payment";

export const PAYMENT_MESSAGES = {
  required: `Payment required: ${SIGN}.`,
  inUse: "This payment is being processed by another request: wait for that response, or sign a new payment for one of the offers in `accepts`.",
  noMatch: `The signed payment matches none of the current offers (the price or the row count may have changed): ${SIGN}.`,
  noMatchForRows: (rows: number) =>
    `The query returned ${rows} rows and the signed payment matches none of the offers for that result: ${SIGN}.`,
  notVerified: (reason: string) => `The payment was not verified (${reason}): sign a new payment for one of the offers in \`accepts\`.`,
  notSettled: (reason: string) =>
    `The payment was verified but could not be settled (${reason}), so nothing was charged: check the payer's balance, then sign a new payment.`,
  otherResource: "This payment was already settled for another resource: sign a new payment for this one.",
  quotedForOther: `This payment was signed for another resource (its resource.url differs): ${SIGN}; the offers here are for this resource.`,
  replayExpired: (seconds: number) =>
    `This payment was settled more than ${seconds} seconds ago; a settled payment is served again only within that time: sign a new payment to request this resource again.`,
  replayRowsChanged: (paid: number, now: number) =>
    `This payment paid for ${paid} rows and the result now has ${now} (the data changed): sign a new payment for one of the offers in \`accepts\`.`,
  replayChanged:
    "The result is no longer the one this payment paid for (the data changed since), and a payment is served again only with the answer it bought: sign a new payment for one of the offers in `accepts`.",
  replayFormat: (format: string) =>
    `This payment's answer was delivered as ${format}; it is served again only in that form: ask again for ${format} (Accept or ?format=${format}), or sign a new payment.`,
  replayFailed: (transaction: string, seconds: number) =>
    `Your payment was settled (transaction ${transaction}), but reading its answer again did not complete (the time limit, or a value it read); nothing more was charged: present the same payment again later; it is served without a new charge within ${seconds} seconds of its settlement.`,
  replaysExhausted: (max: number) =>
    `This payment has been served again ${max} times, the most a payment is served again: sign a new payment to request this resource again.`,
  rowsChanged: (paid: number, now: number) =>
    `The result has ${now} rows, not the ${paid} the payment was for (the data changed while it was verified), so nothing was charged: sign one of the new offers in \`accepts\`.`,
  livesTooLong: (maxTimeoutSeconds: number) =>
    `The authorization's validBefore lies more than ${maxTimeoutSeconds} seconds in the future; this server's offers live at most maxTimeoutSeconds: sign a new payment with validBefore within that time.`,
  localCheck: (problem: string) => `The signed payment cannot pay this offer (${problem}): ${SIGN}.`,
  insufficientBalance: (from: string, holds: string, costs: string) =>
    `The payment cannot be settled (insufficient balance: the authorization's from ${from} holds ${holds}, the offer costs ${costs}), so it was not sent to the facilitator: fund that wallet, or sign one of the offers in \`accepts\` from a wallet that holds enough.`,
  notSmartWallet: (from: string) =>
    `The payment can never be verified (its signature is not a 65-byte ECDSA signature, and the authorization's from ${from} is not a smart wallet: no contract is deployed there, and the signature is not ERC-6492-wrapped with a factory that deploys one), so it was not sent to the facilitator: sign one of the offers in \`accepts\` with the key of ${from} (as x402 V2 clients do) and send the request again with that payment.`,
  pendingElsewhere:
    "This payment's settlement for another resource has not been confirmed yet, so it cannot pay for this one: sign a new payment for this resource.",
  nonceUsed: "This payment's nonce was already used by another settled payment: sign a new payment.",
  settlementUnknown: (reason: string) =>
    `The payment was verified but the facilitator did not settle it (${reason}), and whether it was settled some other way cannot be told now: if the payer's balance shows the transfer, present the same payment again; otherwise sign a new payment.`,
  settlementPending: (reason: string, transaction: string) =>
    `The facilitator sent the transfer${transaction === "" ? "" : ` (transaction ${transaction})`} but did not confirm it (${reason}): present the same payment again in a minute. Once the transfer is on chain it is served without a new charge; if it never lands, that same payment is settled then. Do not sign a new payment meanwhile: both could be charged.`,
  notHeldAfterSettlement: (transaction: string, seconds: number) =>
    `Your payment was settled (transaction ${transaction}), but the server cannot hold its result for delivery right now: present the same payment again in 30 seconds; it is served without a new charge within ${seconds} seconds of its settlement.`,
  nonceConsumed:
    "This payment's authorization was cancelled on chain, or its nonce was spent by another authorization, so it paid nothing and never will: sign a new payment.",
} as const;
