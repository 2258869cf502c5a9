/**
 * Payments for the fuzzer: a valid x402 V2 payload, signed by a real devnet payer, altered field by
 * field (types, lengths, hex case, missing and extra fields, huge numbers, time windows, amounts,
 * recipients, networks, assets, signature bytes, resources, payment-identifier ids) or encoded
 * wrongly (base64, JSON, nesting, size). Each alteration says whether it `mustRefuse`: whether
 * DESIGN.md §6/§8 guarantee that it can never be paid (400 or 402, no settlement), or whether a
 * server may still accept it (hex case of a signed address, an extra field, a replay).
 */
import type { Random } from "./random.ts";

export interface AlteredPayment {
  name: string;
  mustRefuse: boolean;
  /** The decoded payload to send (MCP `_meta`, or JSON then base64 for HTTP). */
  value: unknown;
  /** For HTTP: the exact header, when the alteration is in the encoding itself. */
  header?: string;
}

export interface AlterContext {
  /** A valid address that is none of the offer's. */
  stranger: string;
  /** Another resource URL of the same server (another query). */
  otherResource: string;
  nowSeconds: bigint;
}

type Payload = Record<string, any>;

interface Alteration {
  name: string;
  mustRefuse: boolean;
  weight: number;
  /** Changes the (cloned) payload in place, or returns a replacement value. */
  apply(p: Payload, rng: Random, ctx: AlterContext): unknown | void;
}

const flipHexDigit = (hex: string, rng: Random): string => {
  const i = rng.int(2, hex.length - 1);
  const digit = hex[i]!.toLowerCase();
  const other = "0123456789abcdef"[("0123456789abcdef".indexOf(digit) + rng.int(1, 15)) % 16]!;
  return hex.slice(0, i) + other + hex.slice(i + 1);
};

/** secp256k1's group order: (r, n − s, v ^ 1) is the same signature, malleated (EIP-2 "high s"). */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const authorization = (p: Payload) => p.payload.authorization;

/** `depth` arrays inside each other. */
function nested(depth: number): unknown {
  let value: unknown = null;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

const ALTERATIONS: Alteration[] = [
  { name: "none (valid)", mustRefuse: false, weight: 3, apply: () => {} },
  { name: "x402Version other", mustRefuse: true, weight: 1, apply: (p, rng) => void (p.x402Version = rng.pick([1, 3, "2", null, 0, -2, 2.5, 1e308])) },
  { name: "x402Version missing", mustRefuse: true, weight: 0.5, apply: (p) => void delete p.x402Version },
  { name: "accepted.scheme other", mustRefuse: true, weight: 1, apply: (p, rng) => void (p.accepted.scheme = rng.pick(["EXACT", "upto", "", "exact ", 1])) },
  { name: "accepted.network other", mustRefuse: true, weight: 1, apply: (p, rng) => void (p.accepted.network = rng.pick(["eip155:8453", "eip155:84532", "eip155:0", "eip155:31337 ", "eip155:031337", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:" + "9".repeat(21), 31337])) },
  { name: "accepted.amount other", mustRefuse: true, weight: 1.5, apply: (p, rng) => void (p.accepted.amount = rng.pick([String(BigInt(p.accepted.amount) + 1n), String(BigInt(p.accepted.amount) - 1n), "0", "1", "9".repeat(78), "9".repeat(79), "-1", "1e3", "0x10", " 1000", Number(p.accepted.amount)])) },
  { name: "accepted.asset other", mustRefuse: true, weight: 1, apply: (p, rng, ctx) => void (p.accepted.asset = rng.pick([ctx.stranger, p.accepted.asset.toLowerCase(), p.accepted.asset.toUpperCase().replace("0X", "0x"), "0x0000000000000000000000000000000000000000", p.accepted.asset.slice(0, -1)])) },
  { name: "accepted.payTo other", mustRefuse: true, weight: 1, apply: (p, rng, ctx) => void (p.accepted.payTo = rng.pick([ctx.stranger, p.accepted.payTo.toLowerCase(), `${p.accepted.payTo}00`])) },
  { name: "accepted.maxTimeoutSeconds other", mustRefuse: true, weight: 0.7, apply: (p, rng) => void (p.accepted.maxTimeoutSeconds = rng.pick([0, 1, 299, 301, 1e9, -1, 300.5, "300", null])) },
  { name: "accepted.extra other", mustRefuse: true, weight: 0.7, apply: (p, rng) => void (p.accepted.extra = rng.pick([{}, { name: p.accepted.extra.name, version: "1" }, { name: "USD Coin", version: "2" }, null, [], "x", { ...p.accepted.extra, more: 1 }])) },
  { name: "accepted with an extra field", mustRefuse: true, weight: 0.5, apply: (p) => void (p.accepted.description = "x") },
  { name: "accepted missing", mustRefuse: true, weight: 0.5, apply: (p) => void delete p.accepted },
  { name: "signature byte flipped", mustRefuse: true, weight: 2, apply: (p, rng) => void (p.payload.signature = flipHexDigit(p.payload.signature, rng)) },
  {
    name: "signature v changed",
    mustRefuse: true,
    weight: 0.7,
    apply: (p, rng) => {
      const sig: string = p.payload.signature;
      p.payload.signature = sig.slice(0, -2) + rng.pick(["00", "01", "1b", "1c", "1d", "ff"].filter((v) => v !== sig.slice(-2).toLowerCase()));
    },
  },
  { name: "signature truncated or extended", mustRefuse: true, weight: 1, apply: (p, rng) => void (p.payload.signature = rng.pick([p.payload.signature.slice(0, rng.int(2, 131)), `${p.payload.signature}00`, `${p.payload.signature}${"ab".repeat(rng.int(1, 4100))}`, "0x", "0x0", "", `${p.payload.signature}0`])) },
  { name: "signature not hex", mustRefuse: true, weight: 0.7, apply: (p, rng) => void (p.payload.signature = rng.pick([p.payload.signature.replace("0x", ""), p.payload.signature.replace("0x", "0X"), `${p.payload.signature.slice(0, -1)}g`, 12345, null, [p.payload.signature], "0x" + "0".repeat(130)])) },
  { name: "signature hex upper-cased", mustRefuse: false, weight: 0.5, apply: (p) => void (p.payload.signature = `0x${p.payload.signature.slice(2).toUpperCase()}`) },
  {
    name: "signature malleated (high s)",
    mustRefuse: false,
    weight: 0.5,
    apply: (p) => {
      const sig: string = p.payload.signature;
      const s = BigInt(`0x${sig.slice(66, 130)}`);
      const v = parseInt(sig.slice(130, 132), 16);
      p.payload.signature = `${sig.slice(0, 66)}${(SECP256K1_N - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : v === 28 ? 27 : v ^ 1).toString(16).padStart(2, "0")}`;
    },
  },
  { name: "authorization.from other", mustRefuse: true, weight: 1, apply: (p, _rng, ctx) => void (authorization(p).from = ctx.stranger) },
  { name: "authorization.from hex case", mustRefuse: false, weight: 0.5, apply: (p, rng) => void (authorization(p).from = rng.chance(0.5) ? authorization(p).from.toLowerCase() : `0x${authorization(p).from.slice(2).toUpperCase()}`) },
  { name: "authorization.to other", mustRefuse: true, weight: 1, apply: (p, rng, ctx) => void (authorization(p).to = rng.pick([ctx.stranger, "0x0000000000000000000000000000000000000000"])) },
  { name: "authorization.value other", mustRefuse: true, weight: 1.5, apply: (p, rng) => void (authorization(p).value = rng.pick([String(BigInt(authorization(p).value) + 1n), String(BigInt(authorization(p).value) - 1n), "0", "9".repeat(78), "9".repeat(79), "1".padStart(80, "0"), Number(authorization(p).value), "-5", "1.0"])) },
  { name: "authorization.validAfter in the future", mustRefuse: true, weight: 0.7, apply: (p, rng, ctx) => void (authorization(p).validAfter = String(ctx.nowSeconds + BigInt(rng.pick([30, 3600, 10 ** 12])))) },
  { name: "authorization.validBefore in the past or soon", mustRefuse: true, weight: 1, apply: (p, rng, ctx) => void (authorization(p).validBefore = String(rng.pick([0n, 1n, ctx.nowSeconds - 1n, ctx.nowSeconds, ctx.nowSeconds + 3n]))) },
  { name: "authorization.validBefore far ahead", mustRefuse: true, weight: 1, apply: (p, rng, ctx) => void (authorization(p).validBefore = rng.pick([String(ctx.nowSeconds + 100_000n), "9".repeat(78), String(2n ** 256n - 1n), String(2n ** 256n)])) },
  { name: "authorization times as JSON numbers", mustRefuse: true, weight: 0.5, apply: (p) => void (authorization(p).validBefore = Number(authorization(p).validBefore)) },
  { name: "authorization.nonce changed", mustRefuse: true, weight: 1, apply: (p, rng) => void (authorization(p).nonce = rng.chance(0.7) ? flipHexDigit(authorization(p).nonce, rng) : rng.pick(["0x", "0x00", `${authorization(p).nonce}00`, authorization(p).nonce.slice(2), `0x${"0".repeat(64)}`.slice(0, 65)])) },
  { name: "authorization.nonce hex case", mustRefuse: false, weight: 0.3, apply: (p) => void (authorization(p).nonce = `0x${authorization(p).nonce.slice(2).toUpperCase()}`) },
  { name: "authorization field missing", mustRefuse: true, weight: 1, apply: (p, rng) => void delete authorization(p)[rng.pick(["from", "to", "value", "validAfter", "validBefore", "nonce"])] },
  { name: "authorization field of another type", mustRefuse: true, weight: 1, apply: (p, rng) => void (authorization(p)[rng.pick(["from", "to", "value", "validAfter", "validBefore", "nonce"])] = rng.pick([null, 0, true, [], {}, "", "x".repeat(10_000)])) },
  { name: "payload missing or not an object", mustRefuse: true, weight: 0.5, apply: (p, rng) => void (rng.chance(0.5) ? delete p.payload : (p.payload = rng.pick([null, [], "x", 1]))) },
  { name: "resource of another query", mustRefuse: true, weight: 1, apply: (p, _rng, ctx) => void (p.resource = { ...p.resource, url: ctx.otherResource }) },
  { name: "resource url of another type", mustRefuse: true, weight: 0.5, apply: (p, rng) => void (p.resource = rng.pick([{ url: 1 }, { url: null }, "x", [], null])) },
  { name: "resource missing", mustRefuse: false, weight: 0.3, apply: (p) => void delete p.resource },
  { name: "resource description changed", mustRefuse: false, weight: 0.3, apply: (p, rng) => void (p.resource = { ...p.resource, description: rng.unicode(rng.size(50)) }) },
  { name: "payment-identifier id malformed", mustRefuse: true, weight: 1, apply: (p, rng) => void (p.extensions = { ...p.extensions, "payment-identifier": { info: { required: false, id: rng.pick(["short", "x".repeat(129), "has space in it !!", "ünïcödé-ünïcödé-ü", 12345678901234567, ["abcdefghijklmnop"], "", "../../../../etc/passwd", "a".repeat(15)]) } } }) },
  { name: "payment-identifier id fresh", mustRefuse: false, weight: 0.5, apply: (p, rng) => void (p.extensions = { ...p.extensions, "payment-identifier": { info: { required: false, id: `fuzz_${rng.string(24, "abcdefghijklmnopqrstuvwxyz0123456789")}` } } }) },
  { name: "payment-identifier id fixed", mustRefuse: false, weight: 0.5, apply: (p, rng) => void (p.extensions = { ...p.extensions, "payment-identifier": { info: { required: false, id: rng.pick(["fuzz-shared-id-000001", "fuzz-shared-id-000002"]) } } }) },
  { name: "extensions not an object", mustRefuse: true, weight: 0.3, apply: (p, rng) => void (p.extensions = rng.pick([null, [], "x", 1])) },
  // No id: nothing asks for idempotency, so the payment is an ordinary one.
  { name: "payment-identifier without an id", mustRefuse: false, weight: 0.2, apply: (p, rng) => void (p.extensions = rng.pick([{ "payment-identifier": null }, { "payment-identifier": { info: null } }, { "payment-identifier": "x" }, { "payment-identifier": { info: { required: true } } }])) },
  { name: "extensions unknown", mustRefuse: false, weight: 0.3, apply: (p, rng) => void (p.extensions = { ...p.extensions, [rng.pick(["x", "__proto__", "constructor", "bazaar"])]: { info: rng.unicode(5) } }) },
  { name: "an extra top-level field", mustRefuse: false, weight: 0.3, apply: (p, rng) => void (p[rng.pick(["extra", "scheme", "network", "__proto__"])] = rng.pick([1, "x", {}, null])) },
  { name: "not an object", mustRefuse: true, weight: 0.5, apply: (_p, rng) => rng.pick([null, [], 2, "payment", true, [{}], { x402Version: 2 }]) },
  { name: "deep nesting", mustRefuse: true, weight: 0.3, apply: (p, rng) => void (authorization(p).value = nested(rng.pick([100, 1000, 3000]))) },
];

/** Encodings of the header itself (HTTP only): base64 and JSON done wrong, or huge. */
const ENCODINGS: { name: string; mustRefuse: boolean; weight: number; encode(json: string, rng: Random): string }[] = [
  { name: "standard base64", mustRefuse: false, weight: 20, encode: (json) => b64(json) },
  { name: "base64 without padding", mustRefuse: false, weight: 0.5, encode: (json) => b64(json).replace(/=+$/, "") },
  { name: "base64url alphabet", mustRefuse: false, weight: 0.5, encode: (json) => b64(json).replaceAll("+", "-").replaceAll("/", "_") },
  { name: "spaces around", mustRefuse: false, weight: 0.3, encode: (json) => ` ${b64(json)} ` },
  { name: "a space inside", mustRefuse: true, weight: 0.3, encode: (json, rng) => insertAt(b64(json), rng, " ") },
  { name: "a character that is not base64", mustRefuse: true, weight: 0.5, encode: (json, rng) => insertAt(b64(json), rng, rng.pick(["!", "*", ".", "\u00e9", "%", "=="])) },
  { name: "truncated", mustRefuse: true, weight: 0.5, encode: (json, rng) => b64(json).slice(0, rng.int(0, b64(json).length - 4)) },
  { name: "JSON truncated", mustRefuse: true, weight: 0.5, encode: (json, rng) => b64(json.slice(0, rng.int(0, json.length - 1))) },
  { name: "not JSON", mustRefuse: true, weight: 0.5, encode: (_json, rng) => b64(rng.pick(["hello", "{x402Version:2}", "{'a':1}", "NaN", "undefined", "\u0000", rng.unicode(40)])) },
  // UTF-8 decoding drops a leading byte-order mark (WHATWG Encoding), as x402's decoder does.
  { name: "a byte-order mark first", mustRefuse: false, weight: 0.3, encode: (json) => b64(`\ufeff${json}`) },
  { name: "Latin-1 instead of UTF-8", mustRefuse: false, weight: 0.2, encode: (json) => Buffer.from(json, "latin1").toString("base64") },
  { name: "JSON nested 100,000 deep", mustRefuse: true, weight: 0.2, encode: (_json, rng) => b64("[".repeat(rng.pick([1000, 10_000, 100_000]))) },
  // An extra field is no alteration of the signed payment; a header past the 64 KiB head limit never arrives (431).
  { name: "a 40 KB header", mustRefuse: false, weight: 0.2, encode: (json) => b64(json.replace(/}$/, `,"pad":"${"x".repeat(30_000)}"}`)) },
  { name: "a 70 KB header", mustRefuse: true, weight: 0.1, encode: (json) => b64(json.replace(/}$/, `,"pad":"${"x".repeat(52_000)}"}`)) },
  { name: "the JSON itself, not base64", mustRefuse: true, weight: 0.3, encode: (json) => json },
  { name: "base64 of base64", mustRefuse: true, weight: 0.3, encode: (json) => b64(b64(json)) },
  { name: "duplicate keys", mustRefuse: false, weight: 0.2, encode: (json) => b64(json.replace(/^{/, '{"x402Version":1,')) },
];

function b64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

function insertAt(text: string, rng: Random, piece: string): string {
  const at = rng.int(0, text.length);
  return text.slice(0, at) + piece + text.slice(at);
}

/** One alteration of a valid payload (deep-cloned first). */
export function alterPayment(rng: Random, valid: unknown, ctx: AlterContext, encodings: boolean): AlteredPayment {
  const alteration = rng.weighted(ALTERATIONS.map((a) => [a.weight, a] as const));
  const clone = structuredClone(valid) as Payload;
  const replaced = alteration.apply(clone, rng, ctx);
  const value = replaced === undefined ? clone : replaced;
  if (!encodings) return { name: alteration.name, mustRefuse: alteration.mustRefuse, value };
  const encoding = rng.weighted(ENCODINGS.map((e) => [e.weight, e] as const));
  const header = encoding.encode(JSON.stringify(value), rng);
  const name = encoding.name === "standard base64" ? alteration.name : `${alteration.name}; ${encoding.name}`;
  return { name, mustRefuse: alteration.mustRefuse || encoding.mustRefuse, value, header };
}
