/**
 * A paid request carries its URL twice: in the request line, and again base64-encoded inside
 * PAYMENT-SIGNATURE, whose payload repeats the 402's `resource` (x402 V2). Bun refuses a request
 * whose head is larger than node:http's `maxHeaderSize` (16 KiB unless the process was started with
 * `--max-http-header-size`) with a bare 431, after the buyer has signed. A paid query whose retry
 * cannot fit is therefore refused with a 400 saying what to shorten, before anything is quoted.
 */
import { maxHeaderSize } from "node:http";
import type { PaymentRequirements } from "@x402/core/types";
import { BadRequestError } from "../errors.ts";
import type { PaidResource } from "../payment/pricing.ts";

const HEX_ADDRESS = `0x${"f".repeat(40)}`;

/** The signed part of an `exact` EVM payload at its largest (65-byte signature, long amounts). */
const SIGNED = {
  x402Version: 2,
  payload: {
    signature: `0x${"f".repeat(130)}`,
    authorization: {
      from: HEX_ADDRESS,
      to: HEX_ADDRESS,
      value: "9".repeat(30),
      validAfter: "9".repeat(12),
      validBefore: "9".repeat(12),
      nonce: `0x${"f".repeat(64)}`,
    },
  },
};

/** The 402 description gains " - N rows"; room for any N. */
const DESCRIPTION_SUFFIX = " - 9999999999999999 rows";

/**
 * Everything else in the head: Host, User-Agent, Accept, Accept-Encoding, Connection and the
 * `Access-Control-Expose-Headers` header @x402/fetch adds to its paid retry.
 */
const OTHER_HEADERS_BYTES = 1024;

/**
 * Bytes of the paid retry's request head, at most (the largest offer is the one signed). x402
 * clients echo the 402's `extensions` into the payload (payment/extensions.ts), so they count too.
 */
export function paidRetryHeadBytes(pathAndQuery: string, resource: PaidResource, offers: PaymentRequirements[], extensions?: Record<string, unknown>): number {
  const longest = Math.max(0, ...offers.map((offer) => JSON.stringify(offer).length));
  const quoted = { ...resource, description: resource.description + DESCRIPTION_SUFFIX };
  const payloadBytes = Buffer.byteLength(JSON.stringify({ ...SIGNED, resource: quoted, accepted: {}, extensions }), "utf8") + longest;
  const signatureBytes = Math.ceil(payloadBytes / 3) * 4;
  return `GET ${pathAndQuery} HTTP/1.1\r\n`.length + `PAYMENT-SIGNATURE: \r\n`.length + signatureBytes + OTHER_HEADERS_BYTES;
}

/** Throws a 400 when a paid retry of this request could not reach the server. */
export function checkPaidRetryFits(pathAndQuery: string, resource: PaidResource, offers: PaymentRequirements[], extensions?: Record<string, unknown>): void {
  const excess = paidRetryHeadBytes(pathAndQuery, resource, offers, extensions) - maxHeaderSize;
  if (excess <= 0) return;
  // Each byte of the URL costs one byte in the request line and 4/3 in the base64 payload; the
  // SQL's text in the bazaar extension costs 4/3 more, so this many bytes fewer is always enough.
  const shorten = Math.ceil(excess / (1 + 4 / 3));
  throw new BadRequestError(
    `The query is too long to be paid for: a paid request repeats its URL inside the PAYMENT-SIGNATURE header, ` +
      `and both must fit in the server's ${maxHeaderSize}-byte limit for request headers; ` +
      `shorten the URL-encoded query by at least ${shorten} bytes (e.g. fewer IN items or shorter literals).`,
  );
}
