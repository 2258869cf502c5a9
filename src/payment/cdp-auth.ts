/**
 * Authentication to Coinbase's CDP facilitator (ARCHITECTURE.md §11: `facilitator.cdp`). Every request
 * carries `Authorization: Bearer <JWT>`, a token signed for that one request and valid for two
 * minutes, exactly as Coinbase's own clients make it: `@coinbase/x402` (`createAuthHeader` →
 * `generateJwt` of `@coinbase/cdp-sdk/auth`, src/auth/utils/jwt.ts) and coinbase/x402
 * go/legacy/pkg/coinbasefacilitator/cdp.go:
 *   header  { alg: ES256 | EdDSA, kid: <api key id>, typ: "JWT", nonce: 16 random bytes, hex }
 *   claims  { iss: "cdp", sub: <api key id>, uris: ["<METHOD> <host><path>"], iat, nbf: now, exp: now + 120 }
 * with the host as in the URL (no scheme) and the path without query string.
 *
 * Key secrets come in the two forms CDP issues: an ECDSA P-256 key as PEM (the portal's
 * `-----BEGIN EC PRIVATE KEY-----` SEC1 form, or PKCS#8) → ES256, and an Ed25519 key as base64 of
 * 64 bytes (seed then public key) → EdDSA. The CDP SDK's `generateJwt` only accepts PKCS#8 PEM
 * (jose's `importPKCS8`), so the portal's SEC1 keys fail there (coinbase/cdp-sdk#422); Node's
 * `createPrivateKey` reads both, and jose signs with the resulting KeyObject. PEMs pasted into an
 * environment variable often carry literal `\n`: they are read as line breaks.
 *
 * The secret never appears in a message: problems describe the form, never the value.
 */
import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import type { CdpCredentials } from "../config/cdp-key.ts";

/** How long a token is valid, as Coinbase's SDKs sign them. */
export const CDP_JWT_LIFETIME_SECONDS = 120;

export type { CdpAlgorithm, CdpCredentials, ParsedCdpSecret } from "../config/cdp-key.ts";
export { parseCdpKeySecret } from "../config/cdp-key.ts";

/**
 * `Bearer <JWT>` for one request. `url` is the full request URL; its query string and credentials
 * are not part of the signed `uris` claim (Coinbase signs host and path only).
 */
export async function cdpAuthorization(credentials: CdpCredentials, method: string, url: URL, nowMs = Date.now()): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  const jwt = await new SignJWT({ iss: "cdp", sub: credentials.apiKeyId, uris: [`${method.toUpperCase()} ${url.host}${url.pathname}`] })
    .setProtectedHeader({ alg: credentials.algorithm, kid: credentials.apiKeyId, typ: "JWT", nonce: randomBytes(16).toString("hex") })
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + CDP_JWT_LIFETIME_SECONDS)
    .sign(credentials.privateKey);
  return `Bearer ${jwt}`;
}
