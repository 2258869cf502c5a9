/**
 * Reads the token contract to learn whether a settlement whose answer was lost actually happened
 * (ARCHITECTURE.md §6 "Crashes"): EIP-3009 `authorizationState(authorizer, nonce)` is true once the
 * authorization has been used (or cancelled), and the `AuthorizationUsed(authorizer, nonce)` event
 * names the transaction that used it. Only `rpc_urls` endpoints are asked; nothing is ever sent.
 */
import { createPublicClient, http, parseAbi, type Hex, type PublicClient } from "viem";

export const EIP3009_ABI = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

/** Blocks searched back from the head for the transaction that used an authorization. */
export const LOG_LOOKBACK_BLOCKS = 10_000n;

export interface AuthorizationRef {
  /** `eip155:<chain id>`. */
  network: string;
  asset: string;
  from: string;
  nonce: string;
}

export interface ChainReader {
  /** true: used on chain; false: not used (yet); null: this chain has no RPC endpoint, or it did not answer. */
  authorizationUsed(ref: AuthorizationRef): Promise<boolean | null>;
  /** The transaction that used the authorization, or '' when it cannot be found. */
  findTransaction(ref: AuthorizationRef): Promise<string>;
}

export function createChainReader(rpcUrls: Record<number, string>, timeoutMs = 5_000): ChainReader {
  const clients = new Map<number, PublicClient>();
  const clientFor = (network: string): PublicClient | null => {
    const chainId = Number(network.replace(/^eip155:/, ""));
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
    async authorizationUsed(ref) {
      const client = clientFor(ref.network);
      if (client === null) return null;
      try {
        return await client.readContract({
          address: ref.asset as Hex,
          abi: EIP3009_ABI,
          functionName: "authorizationState",
          args: [ref.from as Hex, ref.nonce as Hex],
        });
      } catch {
        return null;
      }
    },
    async findTransaction(ref) {
      const client = clientFor(ref.network);
      if (client === null) return "";
      try {
        const head = await client.getBlockNumber();
        const logs = await client.getLogs({
          address: ref.asset as Hex,
          event: EIP3009_ABI[1],
          args: { authorizer: ref.from as Hex, nonce: ref.nonce as Hex },
          fromBlock: head > LOG_LOOKBACK_BLOCKS ? head - LOG_LOOKBACK_BLOCKS : 0n,
          toBlock: head,
        });
        return logs[0]?.transactionHash ?? "";
      } catch {
        return "";
      }
    },
  };
}
