/**
 * The `facilitator:` section (ARCHITECTURE.md §2, §11): URLs that carry credentials or a token in the
 * query string, and `cdp` (a Coinbase CDP API key). Every problem names its path; no message ever
 * quotes a secret.
 */
import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { resolveConfig } from "../../src/config/load.ts";
import { minimal } from "./examples.ts";
import { expectProblem, problemsOf } from "./support.ts";

const KEY_ID = "organizations/0b1f/apiKeys/7c2e";
const ED25519_SECRET = (() => {
  const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }) as { d: string; x: string };
  return Buffer.concat([Buffer.from(jwk.d, "base64url"), Buffer.from(jwk.x, "base64url")]).toString("base64");
})();
const P384_PEM = generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey.export({ type: "sec1", format: "pem" }) as string;
const RSA_PEM = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
/** Seed and public half of two different keys: well-formed, but every signature would be refused. */
const MISMATCHED_ED25519 = Buffer.concat([Buffer.from(ED25519_SECRET, "base64").subarray(0, 32), Buffer.alloc(32, 7)]).toString("base64");

const cdp = (fields: Record<string, unknown>, facilitator: Record<string, unknown> = {}) =>
  minimal({ facilitator: { ...facilitator, cdp: { api_key_id: KEY_ID, api_key_secret: ED25519_SECRET, ...fields } } });

const resolve = (raw: Record<string, unknown>, env: Record<string, string> = {}) => resolveConfig(raw, { baseDir: "/srv", env });

// [case, raw config, path, phrase, secret the messages must not contain]
const CASES: [string, Record<string, unknown>, string, string, string][] = [
  ["cdp without a secret", minimal({ facilitator: { cdp: { api_key_id: KEY_ID } } }), "facilitator.cdp.api_key_secret", "is required", ""],
  ["cdp without a key id", minimal({ facilitator: { cdp: { api_key_secret: ED25519_SECRET } } }), "facilitator.cdp.api_key_id", "is required", ED25519_SECRET],
  ["cdp with an empty secret", cdp({ api_key_secret: "" }), "facilitator.cdp.api_key_secret", "must not be empty", ""],
  ["cdp unknown key", cdp({ private_key: "x" }), "facilitator.cdp.private_key", "unknown key", ED25519_SECRET],
  ["secret neither PEM nor base64", cdp({ api_key_secret: "hunter2 is my password!" }), "facilitator.cdp.api_key_secret", "is neither PEM nor base64", "hunter2"],
  ["secret base64 of the wrong length", cdp({ api_key_secret: "c2VjcmV0LXRva2VuLTEyMzQ1Njc4OTA=" }), "facilitator.cdp.api_key_secret", "is base64 of 23 bytes", "c2VjcmV0LXRva2Vu"],
  ["secret PEM that is not a key", cdp({ api_key_secret: "-----BEGIN EC PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END EC PRIVATE KEY-----\n" }), "facilitator.cdp.api_key_secret", "is not a readable PEM private key", "bm90IGEga2V5"],
  ["secret an EC key on another curve", cdp({ api_key_secret: P384_PEM }), "facilitator.cdp.api_key_secret", "is an EC key on secp384r1; CDP API keys are ECDSA P-256 (ES256) or Ed25519", P384_PEM.split("\n")[1]!],
  ["secret an RSA key", cdp({ api_key_secret: RSA_PEM }), "facilitator.cdp.api_key_secret", "is a rsa key", RSA_PEM.split("\n")[1]!],
  ["secret whose halves do not match", cdp({ api_key_secret: MISMATCHED_ED25519 }), "facilitator.cdp.api_key_secret", "public half does not belong", MISMATCHED_ED25519.slice(0, 20)],
  ["key id on two lines", cdp({ api_key_id: "organizations/x\napiKeys/y" }), "facilitator.cdp.api_key_id", "single line", ED25519_SECRET],
  ["cdp and a static Authorization header", cdp({}, { headers: { authorization: "Bearer s3cret-token" } }), "facilitator.cdp", "facilitator.headers also sets Authorization", "s3cret-token"],
  ["cdp and user:password@ in the URL", cdp({}, { url: "https://me:s3cret-pass@f.example" }), "facilitator.cdp", "also holds user:password@", "s3cret-pass"],
  // URLs: the message shows the URL without credentials, query or fragment.
  ["facilitator url with a fragment", minimal({ facilitator: { url: "https://me:s3cret-pass@f.example/x?key=s3cret-key#s3cret-frag" } }), "facilitator.url", '"https://f.example/x" is not an http(s) URL without fragment', "s3cret"],
  ["facilitator url not http", minimal({ facilitator: { url: "ftp://me:s3cret-pass@f.example/?key=s3cret-key" } }), "facilitator.url", '"ftp://f.example" is not an http(s) URL', "s3cret"],
  ["facilitator url that does not parse", minimal({ facilitator: { url: "https://me:s3cret-pass@f.example:99999/?key=s3cret-key" } }), "facilitator.url", "is not an http(s) URL", "s3cret"],
  ["base_url with credentials", minimal({ server: { base_url: "https://me:s3cret-pass@data.example" } }), "server.base_url", '"https://data.example" must not hold user:password@', "s3cret"],
  ["base_url with a query", minimal({ server: { base_url: "https://data.example/?key=s3cret-key" } }), "server.base_url", "without query", "s3cret"],
];

describe("problems are reported at their path, never quoting a secret", () => {
  test.each(CASES)("%s", (_name, raw, path, phrase, secret) => {
    const problems = problemsOf(raw);
    expectProblem(problems, path, phrase);
    expect(problems).toHaveLength(1);
    if (secret !== "") expect(problems.join("\n")).not.toContain(secret);
  });

  test("a secret from an unset environment variable names the variable", () => {
    const problems = problemsOf(cdp({ api_key_secret: "${CDP_API_KEY_SECRET}" }));
    expect(problems[0]).toStartWith("facilitator.cdp.api_key_secret: environment variable CDP_API_KEY_SECRET is not set");
  });
});

describe("accepted", () => {
  test("a URL with user:password@ and a token in the query string; trailing slashes of the path go, the query stays", () => {
    const config = resolve(minimal({ facilitator: { url: "https://me:pa%40ss@f.example/x402/?token=abc/&v=2" } }));
    expect(config.facilitator.url).toBe("https://me:pa%40ss@f.example/x402?token=abc/&v=2");
  });

  test("cdp from the environment: the key id kept, the secret parsed (ES256 from an EC PEM), the URL Coinbase's by default", () => {
    const pem = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "sec1", format: "pem" }) as string;
    const config = resolve(minimal({ facilitator: { cdp: { api_key_id: "${CDP_API_KEY_ID}", api_key_secret: "${CDP_API_KEY_SECRET}" } } }), {
      CDP_API_KEY_ID: KEY_ID,
      CDP_API_KEY_SECRET: pem,
    });
    expect(config.facilitator).toMatchObject({ url: "https://api.cdp.coinbase.com/platform/v2/x402", headers: {}, cdp: { apiKeyId: KEY_ID, algorithm: "ES256" } });
  });

  test("cdp with an explicit URL and other headers", () => {
    const config = resolve(cdp({}, { url: "https://facilitator.example/v2/x402", headers: { "X-Client": "arrow402" } }));
    expect(config.facilitator).toMatchObject({ url: "https://facilitator.example/v2/x402", headers: { "X-Client": "arrow402" }, cdp: { algorithm: "EdDSA" } });
  });

  test("without cdp the resolved section has no cdp key", () => {
    expect("cdp" in resolve(minimal()).facilitator).toBe(false);
  });
});
