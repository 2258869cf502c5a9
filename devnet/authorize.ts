/**
 * Signs an EIP-3009 `TransferWithAuthorization` for the test token, independently of the x402
 * client, and returns the arguments of the `(…, bytes signature)` overload. The sandbox uses it
 * to move a payer's tokens without giving the payer ETH; tests use it to probe the token's
 * rules (single-use nonces, time bounds, malleable signatures) directly.
 */
import { toHex, type Hex, type LocalAccount } from "viem";

export interface AuthorizationToken {
  address: Hex;
  name: string;
  version: string;
  chainId: number;
}

export interface AuthorizationRequest {
  token: AuthorizationToken;
  to: Hex;
  value: bigint;
  /** Seconds since epoch; default 0 (valid at once). */
  validAfter?: bigint;
  /** Seconds since epoch; default one hour from now. */
  validBefore?: bigint;
  /** 32 random bytes unless given. */
  nonce?: Hex;
}

export type TransferWithAuthorizationArgs = readonly [
  from: Hex,
  to: Hex,
  value: bigint,
  validAfter: bigint,
  validBefore: bigint,
  nonce: Hex,
  signature: Hex,
];

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

export async function authorizeTransfer(
  account: LocalAccount,
  request: AuthorizationRequest,
): Promise<TransferWithAuthorizationArgs> {
  const message = {
    from: account.address,
    to: request.to,
    value: request.value,
    validAfter: request.validAfter ?? 0n,
    validBefore: request.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: request.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const signature = await account.signTypedData({
    domain: {
      name: request.token.name,
      version: request.token.version,
      chainId: request.token.chainId,
      verifyingContract: request.token.address,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization",
    message,
  });
  return [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature];
}
