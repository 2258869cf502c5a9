/**
 * The signer of an EIP-3009 `TransferWithAuthorization`, recovered from its EIP-712 signature, for
 * the local checks every paid request passes before any facilitator work (local-checks.ts).
 *
 * The digest is built for this one type (EIP-712 §"Definition of hashStruct": every field of
 * TransferWithAuthorization is one 32-byte word), with the domain separator kept per offer, and
 * the public key is recovered by libsecp256k1 compiled to WebAssembly (@bitauth/libauth, embedded
 * in its JavaScript, so the single executable carries it). This takes ~0.2 ms where viem's generic
 * `recoverTypedDataAddress` (typed-data encoding and a secp256k1 recovery in JavaScript) took
 * ~0.45 ms in a loop and over 1 ms on the request path. tests/payment/signature.test.ts checks it
 * against viem on valid, malleable and malformed signatures.
 */
import { instantiateSecp256k1 } from "@bitauth/libauth/build/lib/crypto/secp256k1.js";
import { keccak256 } from "viem";

/** Compiled once, at start-up (~10 ms). */
const secp256k1 = instantiateSecp256k1();

export interface AuthorizationDomain {
  name: string;
  version: string;
  chainId: bigint;
  verifyingContract: string;
}

/** The signed fields, as the payment payload carries them (validated by payload.ts). */
export interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

const text = new TextEncoder();
const hash = (bytes: Uint8Array): Uint8Array => keccak256(bytes, "bytes");

const DOMAIN_TYPE_HASH = hash(text.encode("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"));
const TYPE_HASH = hash(
  text.encode("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"),
);
const UINT256_MAX = (1n << 256n) - 1n;
const WORD = 32;

/** Thrown for a value that cannot be signed (not a uint256, not an address); the caller refuses the payment. */
export class UnsignableError extends Error {}

function putUint(target: Uint8Array, offset: number, value: bigint): void {
  if (value < 0n || value > UINT256_MAX) throw new UnsignableError(`${value} is not a uint256`);
  const view = new DataView(target.buffer, target.byteOffset + offset, WORD);
  for (let i = 3; i >= 0; i--) {
    view.setBigUint64(i * 8, value & 0xffff_ffff_ffff_ffffn);
    value >>= 64n;
  }
}

/** `hex` (0x-prefixed) as exactly `size` bytes, right-aligned in a word when `size` < 32. */
function putHex(target: Uint8Array, offset: number, hex: string, size: number): void {
  const bytes = Buffer.from(hex.slice(2), "hex");
  if (!hex.startsWith("0x") || hex.length !== 2 + size * 2 || bytes.length !== size) throw new UnsignableError(`${hex} is not ${size} bytes of hex`);
  target.set(bytes, offset + WORD - size);
}

/** Domain separators of the offers seen, which come from the configuration: a handful. */
const domainSeparators = new Map<string, Uint8Array>();
const MAX_DOMAINS = 256;

function domainSeparator(domain: AuthorizationDomain): Uint8Array {
  const key = JSON.stringify([domain.name, domain.version, domain.chainId.toString(), domain.verifyingContract.toLowerCase()]);
  let separator = domainSeparators.get(key);
  if (separator === undefined) {
    const words = new Uint8Array(5 * WORD);
    words.set(DOMAIN_TYPE_HASH, 0);
    words.set(hash(text.encode(domain.name)), WORD);
    words.set(hash(text.encode(domain.version)), 2 * WORD);
    putUint(words, 3 * WORD, domain.chainId);
    putHex(words, 4 * WORD, domain.verifyingContract, 20);
    separator = hash(words);
    if (domainSeparators.size >= MAX_DOMAINS) domainSeparators.clear();
    domainSeparators.set(key, separator);
  }
  return separator;
}

/** The EIP-712 digest the payer signed: keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(authorization)). */
export function authorizationDigest(domain: AuthorizationDomain, authorization: Authorization): Uint8Array {
  const struct = new Uint8Array(7 * WORD);
  struct.set(TYPE_HASH, 0);
  putHex(struct, WORD, authorization.from, 20);
  putHex(struct, 2 * WORD, authorization.to, 20);
  putUint(struct, 3 * WORD, BigInt(authorization.value));
  putUint(struct, 4 * WORD, BigInt(authorization.validAfter));
  putUint(struct, 5 * WORD, BigInt(authorization.validBefore));
  putHex(struct, 6 * WORD, authorization.nonce, 32);
  const message = new Uint8Array(2 + 2 * WORD);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(domainSeparator(domain), 2);
  message.set(hash(struct), 2 + WORD);
  return hash(message);
}

/** The recovery id of a signature's last byte: 0 / 1, or Ethereum's 27 / 28 (as viem reads it). */
function recoveryId(v: number): 0 | 1 | null {
  if (v === 0 || v === 27) return 0;
  if (v === 1 || v === 28) return 1;
  return null;
}

/**
 * The address (lower-case, 0x-prefixed) whose key made `signature` (65 bytes of hex: r ‖ s ‖ v)
 * over the authorization, or null when the signature is not a valid ECDSA signature.
 */
export async function recoverAuthorizationSigner(domain: AuthorizationDomain, authorization: Authorization, signature: string): Promise<string | null> {
  const curve = await secp256k1;
  const bytes = Buffer.from(signature.slice(2), "hex");
  if (bytes.length !== 65) return null;
  const id = recoveryId(bytes[64]!);
  if (id === null) return null;
  const publicKey = curve.recoverPublicKeyUncompressed(bytes.subarray(0, 64), id, authorizationDigest(domain, authorization));
  if (typeof publicKey === "string") return null;
  // An Ethereum address is the last 20 bytes of the keccak of the key without its 0x04 prefix.
  return `0x${Buffer.from(hash(publicKey.subarray(1)).subarray(12)).toString("hex")}`;
}
