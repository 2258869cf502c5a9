/**
 * What the chain says about one settlement attempt, for `arrow402 payments --reconcile` (ARCHITECTURE.md
 * §6 "Crashes"). Unlike the payment core's ChainReader, which only needs the payment's state, reconcile
 * must also know *why* it cannot tell (no endpoint configured, or the endpoint failed) to say which
 * setting to change, and *when* the chain is (its latest block's timestamp): an unused EIP-3009
 * authorization can never be used once a block at or after its `validBefore` exists, because
 * `transferWithAuthorization` requires `block.timestamp < validBefore` and block times never go back.
 *
 * The state is read at that very block, so "unused at a block past validBefore" is one consistent
 * observation. Only `rpc_urls` endpoints are asked; nothing is ever sent.
 */
import { createPublicClient, http, type Hex, type PublicClient } from "viem";
import { EIP3009_ABI, findNonceUse, type PaymentRef } from "./chain.ts";

export type AuthorizationCheck =
  /** `rpc_urls` has no endpoint for the attempt's chain. */
  | { kind: "no-rpc"; chainId: number }
  /** The endpoint did not answer, or answered an error. */
  | { kind: "rpc-failed"; chainId: number; endpoint: string; reason: string }
  /**
   * Used on chain by this payment (chain.ts `findNonceUse`): `transaction` moved its amount to its
   * payTo, with its block's time; null when no log names the nonce in the last LOG_LOOKBACK_BLOCKS blocks.
   */
  | { kind: "used"; transaction: { hash: string; minedAt: Date } | null }
  /** The nonce was cancelled, or spent by another authorization, in `transaction`: this payment moved nothing. */
  | { kind: "consumed"; cancelled: boolean; transaction: string | null }
  /** Not used as of the latest block, whose timestamp (Unix seconds) is `chainTime`. */
  | { kind: "unused"; chainTime: bigint };

export interface AuthorizationChecker {
  check(ref: PaymentRef): Promise<AuthorizationCheck>;
}

export function createAuthorizationChecker(rpcUrls: Record<number, string>, timeoutMs = 10_000): AuthorizationChecker {
  const clients = new Map<number, PublicClient>();
  const clientFor = (chainId: number): PublicClient | null => {
    const url = rpcUrls[chainId];
    if (url === undefined) return null;
    let client = clients.get(chainId);
    if (client === undefined) {
      client = createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount: 1 }) });
      clients.set(chainId, client);
    }
    return client;
  };

  return {
    async check(ref) {
      const chainId = Number(ref.network.replace(/^eip155:/, ""));
      const client = clientFor(chainId);
      if (client === null) return { kind: "no-rpc", chainId };
      const asset = ref.asset as Hex;
      const args = { authorizer: ref.from as Hex, nonce: ref.nonce as Hex };
      try {
        const head = await client.getBlock({ blockTag: "latest" });
        const used = await client.readContract({
          address: asset,
          abi: EIP3009_ABI,
          functionName: "authorizationState",
          args: [args.authorizer, args.nonce],
          blockNumber: head.number,
        });
        if (!used) return { kind: "unused", chainTime: head.timestamp };
        const use = await findNonceUse(client, ref, head.number);
        if (use.kind === "consumed") return use;
        if (use.kind === "not-found") return { kind: "used", transaction: null };
        const block = await client.getBlock({ blockNumber: use.blockNumber });
        return { kind: "used", transaction: { hash: use.transaction, minedAt: new Date(Number(block.timestamp) * 1000) } };
      } catch (error) {
        return { kind: "rpc-failed", chainId, endpoint: endpointName(rpcUrls[chainId]!), reason: shortReason(error) };
      }
    },
  };
}

/**
 * The endpoint as it may be printed: its origin only. RPC providers put the API key in the path
 * (`https://base-mainnet.g.alchemy.com/v2/<key>`) as often as in the query string.
 */
function endpointName(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(not a URL)";
  }
}

/** viem's one-line summary of an RPC failure (its full message spans many lines and repeats the URL). */
function shortReason(error: unknown): string {
  const short = (error as { shortMessage?: unknown }).shortMessage;
  const text = typeof short === "string" ? short : error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0]!.trim().replace(/\.$/, "");
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}
