/**
 * The CDP API key of `facilitator.cdp` (ARCHITECTURE.md §11), read and checked at start-up: an ECDSA
 * P-256 key as PEM (the portal's SEC1 form, or PKCS#8) → ES256, or an Ed25519 key as base64 of 64
 * bytes (seed then public key) → EdDSA. payment/cdp-auth.ts signs each facilitator request with it.
 * The secret never appears in a message: problems describe the form, never the value.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";

export type CdpAlgorithm = "ES256" | "EdDSA";

/** A parsed CDP API key. The private key is a KeyObject: logging or serialising it shows no key material. */
export interface CdpCredentials {
  apiKeyId: string;
  algorithm: CdpAlgorithm;
  privateKey: KeyObject;
}

export type ParsedCdpSecret = { ok: true; algorithm: CdpAlgorithm; privateKey: KeyObject } | { ok: false; problem: string };

const FORMS = "write the ECDSA key as PEM (-----BEGIN EC PRIVATE KEY----- …) or the Ed25519 key as the base64 text CDP gave you";

/** Reads an `api_key_secret`; the problem, if any, says what form is expected and never quotes the secret. */
export function parseCdpKeySecret(secret: string): ParsedCdpSecret {
  const text = secret.trim();
  if (text === "") return { ok: false, problem: `is empty; ${FORMS}` };
  return text.includes("-----BEGIN") ? parsePem(text) : parseEd25519Base64(text);
}

function parsePem(text: string): ParsedCdpSecret {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text.replaceAll("\\n", "\n"), format: "pem" });
  } catch {
    return { ok: false, problem: `is not a readable PEM private key (unencrypted); ${FORMS}` };
  }
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") {
    return { ok: true, algorithm: "ES256", privateKey: key };
  }
  if (key.asymmetricKeyType === "ed25519") return { ok: true, algorithm: "EdDSA", privateKey: key };
  const kind = key.asymmetricKeyType === "ec" ? `an EC key on ${key.asymmetricKeyDetails?.namedCurve ?? "another curve"}` : `a ${key.asymmetricKeyType} key`;
  return { ok: false, problem: `is ${kind}; CDP API keys are ECDSA P-256 (ES256) or Ed25519` };
}

function parseEd25519Base64(text: string): ParsedCdpSecret {
  const compact = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return { ok: false, problem: `is neither PEM nor base64; ${FORMS}` };
  const bytes = Buffer.from(compact, "base64");
  if (bytes.length !== 64) {
    return { ok: false, problem: `is base64 of ${bytes.length} bytes; a CDP Ed25519 key secret is 64 bytes (seed and public key)` };
  }
  const d = bytes.subarray(0, 32).toString("base64url");
  const x = bytes.subarray(32).toString("base64url");
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d, x }, format: "jwk" });
  } catch {
    return { ok: false, problem: `is not a valid Ed25519 key; ${FORMS}` };
  }
  // The second half must be the first half's public key, or every signature would be refused.
  if ((createPublicKey(key).export({ format: "jwk" }) as { x?: string }).x !== x) {
    return { ok: false, problem: "is not a valid Ed25519 key: its public half does not belong to its private half" };
  }
  return { ok: true, algorithm: "EdDSA", privateKey: key };
}
