/**
 * The signer recovery of the local checks (src/payment/signature.ts) against viem's generic
 * `recoverTypedDataAddress`, on the same inputs: authorizations signed by several keys under
 * several domains, and the same signatures made malleable, re-encoded or broken. Both must name
 * the same signer, or both refuse.
 */
import { describe, expect, test } from "bun:test";
import { hashTypedData, recoverTypedDataAddress, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { authorizationDigest, recoverAuthorizationSigner, UnsignableError, type Authorization, type AuthorizationDomain } from "../../src/payment/signature.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES as TYPES } from "../../devnet/authorize.ts";
import { mulberry32 } from "../support/random.ts";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const random = mulberry32(3009);
const hex = (bytes: number) => `0x${Array.from({ length: bytes }, () => Math.floor(random() * 256).toString(16).padStart(2, "0")).join("")}` as Hex;
const uint = (max: bigint) => BigInt(Math.floor(random() * 2 ** 52)) * (max / 2n ** 52n);

const keys = Array.from({ length: 4 }, () => privateKeyToAccount(hex(32)));
const domains: AuthorizationDomain[] = [
  { name: "USD Coin", version: "2", chainId: 8453n, verifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
  { name: "USDC", version: "2", chainId: 84532n, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" },
  { name: "Test USD Coin — ünïcode", version: "10", chainId: 31337n, verifyingContract: hex(20) },
];

interface Signed {
  domain: AuthorizationDomain;
  authorization: Authorization;
  signature: Hex;
}

const signed: Signed[] = [];
for (let i = 0; i < 24; i++) {
  const account = keys[i % keys.length]!;
  const domain = domains[i % domains.length]!;
  const message = { from: account.address, to: hex(20), value: uint(2n ** 96n), validAfter: i % 2 === 0 ? 0n : uint(2n ** 40n), validBefore: uint(2n ** 255n), nonce: hex(32) };
  const signature = await account.signTypedData({ domain: viemDomain(domain), types: TYPES, primaryType: "TransferWithAuthorization", message });
  const authorization = { ...message, value: String(message.value), validAfter: String(message.validAfter), validBefore: String(message.validBefore) };
  signed.push({ domain, authorization, signature });
}

function viemDomain(domain: AuthorizationDomain) {
  return { name: domain.name, version: domain.version, chainId: Number(domain.chainId), verifyingContract: domain.verifyingContract as Hex };
}

function viemMessage(authorization: Authorization) {
  const { from, to, value, validAfter, validBefore, nonce } = authorization;
  return { from: from as Hex, to: to as Hex, value: BigInt(value), validAfter: BigInt(validAfter), validBefore: BigInt(validBefore), nonce: nonce as Hex };
}

/** viem's answer: the signer (lower-case) or null when it refuses the signature. */
async function viemSigner({ domain, authorization, signature }: Signed): Promise<string | null> {
  try {
    const signer = await recoverTypedDataAddress({ domain: viemDomain(domain), types: TYPES, primaryType: "TransferWithAuthorization", message: viemMessage(authorization), signature });
    return signer.toLowerCase();
  } catch {
    return null;
  }
}

const ours = ({ domain, authorization, signature }: Signed) => recoverAuthorizationSigner(domain, authorization, signature);

/** The signature with its parts replaced. */
function withParts(signature: Hex, parts: { r?: bigint; s?: bigint; v?: number }): Hex {
  const r = parts.r ?? BigInt(signature.slice(0, 66));
  const s = parts.s ?? BigInt(`0x${signature.slice(66, 130)}`);
  const v = parts.v ?? Number.parseInt(signature.slice(130), 16);
  return `0x${r.toString(16).padStart(64, "0")}${s.toString(16).padStart(64, "0")}${v.toString(16).padStart(2, "0")}`;
}
const sOf = (signature: Hex) => BigInt(`0x${signature.slice(66, 130)}`);
const vOf = (signature: Hex) => Number.parseInt(signature.slice(130), 16);

describe("the EIP-712 digest", () => {
  test.each(signed.map((entry, i) => [i, entry] as const))("authorization %d hashes as viem's hashTypedData", (_i, { domain, authorization }) => {
    const expected = hashTypedData({ domain: viemDomain(domain), types: TYPES, primaryType: "TransferWithAuthorization", message: viemMessage(authorization) });
    expect(`0x${Buffer.from(authorizationDigest(domain, authorization)).toString("hex")}`).toBe(expected);
  });

  test("a value beyond uint256 or an address of the wrong length cannot be signed", () => {
    const { domain, authorization } = signed[0]!;
    expect(() => authorizationDigest(domain, { ...authorization, value: (2n ** 256n).toString() })).toThrow(UnsignableError);
    expect(() => authorizationDigest(domain, { ...authorization, to: `${authorization.to}00` })).toThrow(UnsignableError);
    expect(() => authorizationDigest(domain, { ...authorization, nonce: `0x${"zz".repeat(32)}` })).toThrow(UnsignableError);
  });
});

describe("the signer, as viem recovers it", () => {
  const variants: [string, (entry: Signed) => Signed][] = [
    ["as signed", (e) => e],
    ["v as a recovery id (0/1)", (e) => ({ ...e, signature: withParts(e.signature, { v: vOf(e.signature) - 27 }) })],
    ["malleable: s' = n − s, v flipped", (e) => ({ ...e, signature: withParts(e.signature, { s: N - sOf(e.signature), v: vOf(e.signature) === 27 ? 28 : 27 }) })],
    ["the other recovery id", (e) => ({ ...e, signature: withParts(e.signature, { v: vOf(e.signature) === 27 ? 28 : 27 }) })],
    ["v = 29", (e) => ({ ...e, signature: withParts(e.signature, { v: 29 }) })],
    ["v = 2", (e) => ({ ...e, signature: withParts(e.signature, { v: 2 }) })],
    ["r = 0", (e) => ({ ...e, signature: withParts(e.signature, { r: 0n }) })],
    ["s = 0", (e) => ({ ...e, signature: withParts(e.signature, { s: 0n }) })],
    ["r = n", (e) => ({ ...e, signature: withParts(e.signature, { r: N }) })],
    ["s = 2^256 − 1", (e) => ({ ...e, signature: withParts(e.signature, { s: 2n ** 256n - 1n }) })],
    ["another value signed for", (e) => ({ ...e, authorization: { ...e.authorization, value: String(BigInt(e.authorization.value) + 1n) } })],
    ["another domain", (e) => ({ ...e, domain: { ...e.domain, chainId: e.domain.chainId + 1n } })],
  ];
  const cases = variants.flatMap(([name, change]) => signed.slice(0, 6).map((entry, i) => [name, i, change(entry)] as const));

  test.each(cases)("%s (authorization %d)", async (_name, _i, entry) => {
    expect(await ours(entry)).toBe(await viemSigner(entry));
  });

  test("every signature as signed recovers to its `from`", async () => {
    for (const entry of signed) expect(await ours(entry)).toBe(entry.authorization.from.toLowerCase());
  });

  test("a signature that is not 65 bytes is refused", async () => {
    const entry = signed[0]!;
    expect(await ours({ ...entry, signature: `${entry.signature}00` as Hex })).toBeNull();
    expect(await ours({ ...entry, signature: entry.signature.slice(0, -2) as Hex })).toBeNull();
  });
});
