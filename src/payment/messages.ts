/** The `error` sentences of 402 bodies (DESIGN.md §8): what happened and what the client should do. */

const SIGN = "sign one of the offers in `accepts` with an x402 V2 client and send it in the PAYMENT-SIGNATURE header";

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
  expired: "This payment was already settled and its authorization has expired: sign a new payment to request this resource again.",
  nonceUsed: "This payment's nonce was already used by another settled payment: sign a new payment.",
} as const;
