/**
 * CDP authentication (ARCHITECTURE.md §11 `facilitator.cdp`) against a real HTTP server on 127.0.0.1
 * that checks every request's JWT the way Coinbase's API does: the signature against the key's
 * public half (ES256 for ECDSA keys, EdDSA for Ed25519), `kid`/`sub` naming the key, `iss: cdp`,
 * `uris` naming this request's method, host and path, `nbf`/`exp` (at most two minutes), and a
 * nonce never seen before. It refuses anything else with 401, as a facilitator would. The client is
 * built from a resolved config (`${VAR}` expanded), as `arrow402 serve` builds it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { decodeProtectedHeader, jwtVerify } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { resolveConfig } from "../../src/config/load.ts";
import { ConfigError, FacilitatorError } from "../../src/errors.ts";
import { createFacilitatorClient } from "../../src/payment/facilitator.ts";
import { offersForQuery, paymentRequiredBody } from "../../src/payment/pricing.ts";
import { decodePaymentSignature, type ExactPaymentPayload } from "../../src/payment/wire.ts";
import type { PaymentRequirements } from "@x402/core/types";
import { minimal } from "../config/examples.ts";
import { payingClient } from "./client.ts";
import { fixed } from "./fixtures.ts";

const KEY_ID = "organizations/0b1f/apiKeys/7c2e-test";
const ROUTE = "/platform/v2/x402";
const HASH = "0x" + "12".repeat(32);

interface TestKey {
  name: string;
  algorithm: "ES256" | "EdDSA";
  /** The api_key_secret as CDP hands it out. */
  secret: string;
  publicKey: KeyObject;
}

/** An ECDSA P-256 key as the CDP portal gives it: SEC1 PEM (`BEGIN EC PRIVATE KEY`). */
function ecKey(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { name: "ECDSA (SEC1 PEM)", algorithm: "ES256", secret: privateKey.export({ type: "sec1", format: "pem" }) as string, publicKey };
}

/** An Ed25519 key as CDP gives it: base64 of seed (32 bytes) then public key (32 bytes). */
function edKey(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" }) as { d: string; x: string };
  const secret = Buffer.concat([Buffer.from(jwk.d, "base64url"), Buffer.from(jwk.x, "base64url")]).toString("base64");
  return { name: "Ed25519 (base64)", algorithm: "EdDSA", secret, publicKey };
}

interface Seen {
  method: string;
  path: string;
  jwt: string | null;
  verdict: "accepted" | string;
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
}

/** A facilitator that authenticates like Coinbase's: every refusal is 401 with the reason recorded. */
function startCdpFacilitator(key: TestKey) {
  const seen: Seen[] = [];
  const nonces = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const entry: Seen = { method: request.method, path: url.pathname, jwt: null, verdict: "" };
      seen.push(entry);
      const refuse = (why: string) => {
        entry.verdict = why;
        return Response.json({ errorType: "unauthorized", errorMessage: "Unauthorized." }, { status: 401 });
      };
      const bearer = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
      if (!bearer) return refuse("no bearer token");
      entry.jwt = bearer[1]!;
      let header: Record<string, unknown>;
      try {
        header = decodeProtectedHeader(entry.jwt) as Record<string, unknown>;
      } catch {
        return refuse("not a JWT");
      }
      if (header.kid !== KEY_ID) return refuse("unknown kid");
      if (header.typ !== "JWT" || typeof header.nonce !== "string" || !/^[0-9a-f]{32}$/.test(header.nonce)) return refuse("bad header");
      let claims: Record<string, unknown>;
      try {
        ({ payload: claims } = await jwtVerify(entry.jwt, key.publicKey, {
          algorithms: [key.algorithm],
          issuer: "cdp",
          subject: KEY_ID,
          requiredClaims: ["iat", "nbf", "exp", "uris"],
        }));
      } catch (error) {
        return refuse(`jwt: ${(error as { code?: string }).code ?? String(error)}`);
      }
      entry.header = header;
      entry.claims = claims;
      if ((claims.exp as number) - (claims.nbf as number) > 120) return refuse("lifetime over 120 s");
      const uri = `${request.method} ${request.headers.get("host")}${url.pathname}`;
      if (!Array.isArray(claims.uris) || claims.uris.length !== 1 || claims.uris[0] !== uri) return refuse(`uris do not name ${uri}`);
      if (nonces.has(header.nonce)) return refuse("nonce replayed");
      nonces.add(header.nonce);
      entry.verdict = "accepted";
      if (url.pathname === `${ROUTE}/verify`) return Response.json({ isValid: true, payer: "0x0000000000000000000000000000000000000001" });
      if (url.pathname === `${ROUTE}/settle`) return Response.json({ success: true, transaction: HASH, network: "eip155:84532", payer: "" });
      if (url.pathname === `${ROUTE}/supported`) return Response.json({ kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:84532" }] });
      return Response.json({ error: "not found" }, { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}${ROUTE}`, host: `127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

let payload: ExactPaymentPayload;
let requirements: PaymentRequirements;
beforeAll(async () => {
  const offers = offersForQuery([fixed(1000n)], { counted: null, limit: null }, { maxTimeoutSeconds: 300 });
  const body = paymentRequiredBody({ url: "http://localhost/api/query?query=x", description: "test", mimeType: "application/json" }, offers, "");
  payload = decodePaymentSignature(await payingClient(privateKeyToAccount(generatePrivateKey())).sign(body));
  requirements = offers[0]!.requirement;
});

/** The facilitator config as an operator writes it, the secret in the environment. */
function clientFor(url: string, secret: string, now?: () => number) {
  const config = resolveConfig(
    minimal({ facilitator: { url, cdp: { api_key_id: KEY_ID, api_key_secret: "${CDP_API_KEY_SECRET}" } } }),
    { baseDir: "/srv", env: { CDP_API_KEY_SECRET: secret } },
  );
  return createFacilitatorClient({ ...config.facilitator, ...(now === undefined ? {} : { now }) });
}

/** Every line written to the console while `run` runs. */
async function consoleDuring(run: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const saved = { log: console.log, error: console.error, warn: console.warn, info: console.info, debug: console.debug };
  for (const name of Object.keys(saved) as (keyof typeof saved)[]) console[name] = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  try {
    await run();
  } finally {
    Object.assign(console, saved);
  }
  return lines.join("\n");
}

/** Pieces of a secret long enough to be recognisable in any output. */
const fragmentsOf = (secret: string) => secret.split(/\s+|-----[A-Z ]+-----/).filter((part) => part.length >= 16);

describe.each([ecKey(), edKey()])("$name key", (key) => {
  let facilitator: ReturnType<typeof startCdpFacilitator>;
  beforeAll(() => {
    facilitator = startCdpFacilitator(key);
  });
  afterAll(() => facilitator.stop());
  afterEach(() => void (facilitator.seen.length = 0));

  test("verify, settle and supported each carry a fresh JWT naming that request, and are accepted", async () => {
    const client = clientFor(facilitator.url, key.secret);
    expect((await client.verify(payload, requirements)).isValid).toBe(true);
    expect(await client.settle(payload, requirements)).toMatchObject({ success: true, transaction: HASH });
    expect((await client.supported()).kinds).toHaveLength(1);
    expect(await client.verify(payload, requirements)).toMatchObject({ isValid: true });

    const { seen, host } = facilitator;
    expect(seen.map(({ method, path, verdict }) => ({ method, path, verdict }))).toEqual([
      { method: "POST", path: `${ROUTE}/verify`, verdict: "accepted" },
      { method: "POST", path: `${ROUTE}/settle`, verdict: "accepted" },
      { method: "GET", path: `${ROUTE}/supported`, verdict: "accepted" },
      { method: "POST", path: `${ROUTE}/verify`, verdict: "accepted" },
    ]);
    expect(new Set(seen.map((entry) => entry.jwt)).size).toBe(4);
    expect(seen.map((entry) => entry.claims!.uris)).toEqual([
      [`POST ${host}${ROUTE}/verify`],
      [`POST ${host}${ROUTE}/settle`],
      [`GET ${host}${ROUTE}/supported`],
      [`POST ${host}${ROUTE}/verify`],
    ]);
    const now = Math.floor(Date.now() / 1000);
    for (const { header, claims } of seen) {
      expect(header).toMatchObject({ alg: key.algorithm, kid: KEY_ID, typ: "JWT" });
      expect(claims).toMatchObject({ iss: "cdp", sub: KEY_ID });
      expect(claims!.nbf).toBe(claims!.iat as number);
      expect(claims!.exp).toBe((claims!.iat as number) + 120);
      expect(Math.abs((claims!.iat as number) - now)).toBeLessThanOrEqual(5);
    }
  });

  test("a token dated 10 minutes ago has expired: refused (401), a FacilitatorError that points at facilitator.cdp", async () => {
    const client = clientFor(facilitator.url, key.secret, () => Date.now() - 600_000);
    const error = await client.verify(payload, requirements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as Error).message).toContain("refused our credentials on /verify (HTTP 401); check facilitator.cdp");
    expect(facilitator.seen.map((entry) => entry.verdict)).toEqual(["jwt: ERR_JWT_EXPIRED"]);
  });

  test("a token signed with another key under the same id is forged: refused", async () => {
    const other = key.algorithm === "ES256" ? ecKey() : edKey();
    const error = await clientFor(facilitator.url, other.secret).settle(payload, requirements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect(facilitator.seen.map((entry) => entry.verdict)).toEqual(["jwt: ERR_JWS_SIGNATURE_VERIFICATION_FAILED"]);
  });

  test("the verifier is strict: a token replayed, or sent to another endpoint, is refused", async () => {
    await clientFor(facilitator.url, key.secret).verify(payload, requirements);
    const token = facilitator.seen[0]!.jwt!;
    const body = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
    const send = (endpoint: string) =>
      fetch(`${facilitator.url}/${endpoint}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body });
    expect((await send("verify")).status).toBe(401);
    expect((await send("settle")).status).toBe(401);
    expect(facilitator.seen.map((entry) => entry.verdict)).toEqual(["accepted", "nonce replayed", `uris do not name POST ${facilitator.host}${ROUTE}/settle`]);
  });

  test("the secret never appears in errors or on the console, whatever fails", async () => {
    const messages: string[] = [];
    const output = await consoleDuring(async () => {
      const clients = [
        clientFor(facilitator.url, key.secret, () => Date.now() - 600_000), // refused: expired
        clientFor("http://127.0.0.1:9", key.secret), // unreachable
        clientFor(`${facilitator.url}/missing`, key.secret), // 404
      ];
      for (const client of clients) {
        for (const call of [() => client.verify(payload, requirements), () => client.settle(payload, requirements), () => client.supported()]) {
          const error = await call().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(FacilitatorError);
          messages.push((error as Error).message, String(error), Bun.inspect(error));
        }
      }
    });
    expect(messages).toHaveLength(27);
    const everything = [...messages, output].join("\n");
    expect(fragmentsOf(key.secret).length).toBeGreaterThan(0);
    for (const fragment of fragmentsOf(key.secret)) expect(everything).not.toContain(fragment);
  });

  test("the parsed key prints no key material (a config logged by mistake leaks nothing)", () => {
    const config = resolveConfig(minimal({ facilitator: { cdp: { api_key_id: KEY_ID, api_key_secret: key.secret } } }), { baseDir: "/srv", env: {} });
    const printed = [Bun.inspect(config), JSON.stringify(config, (_k, v) => (typeof v === "bigint" ? v.toString() : v))].join("\n");
    expect(printed).toContain(KEY_ID);
    for (const fragment of fragmentsOf(key.secret)) expect(printed).not.toContain(fragment);
  });
});

describe("key secrets in the forms people paste them", () => {
  const pkcs8Key = (): TestKey => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return { name: "PKCS#8", algorithm: "ES256", secret: privateKey.export({ type: "pkcs8", format: "pem" }) as string, publicKey };
  };
  const FORMS: [string, () => TestKey, (secret: string) => string][] = [
    ["SEC1 PEM with literal \\n (from an environment variable)", ecKey, (secret) => secret.replaceAll("\n", "\\n")],
    ["PKCS#8 PEM", pkcs8Key, (secret) => secret],
    ["Ed25519 base64 with surrounding whitespace", edKey, (secret) => `  ${secret}\n`],
  ];
  test.each(FORMS)("%s signs accepted requests", async (_name, make, paste) => {
    const key = make();
    const facilitator = startCdpFacilitator(key);
    try {
      await clientFor(facilitator.url, paste(key.secret)).verify(payload, requirements);
      expect(facilitator.seen.map((entry) => entry.verdict)).toEqual(["accepted"]);
    } finally {
      facilitator.stop();
    }
  });

  test("with facilitator.cdp and no url, the facilitator is Coinbase's", () => {
    const config = resolveConfig(minimal({ facilitator: { cdp: { api_key_id: KEY_ID, api_key_secret: edKey().secret } } }), { baseDir: "/srv", env: {} });
    expect(config.facilitator.url).toBe("https://api.cdp.coinbase.com/platform/v2/x402");
    expect(config.facilitator.cdp).toMatchObject({ apiKeyId: KEY_ID, algorithm: "EdDSA" });
  });

  test("a bad secret is a config problem at facilitator.cdp.api_key_secret that does not quote it", () => {
    const secret = "c2VjcmV0LXRoYXQtaXMtbm90LWEta2V5LXNlY3JldC10aGF0LWlzLW5vdC1hLWtleQ==";
    let problems: string[] = [];
    try {
      resolveConfig(minimal({ facilitator: { cdp: { api_key_id: KEY_ID, api_key_secret: secret } } }), { baseDir: "/srv", env: {} });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).problems;
    }
    expect(problems).toEqual([expect.stringMatching(/^facilitator\.cdp\.api_key_secret: is base64 of 49 bytes/)]);
    expect(problems.join("\n")).not.toContain(secret.slice(0, 16));
  });
});
