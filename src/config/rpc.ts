/**
 * `rpc_urls:` (ARCHITECTURE.md §2, §6 step 4 and "Crashes"): JSON-RPC endpoints by chain id, only
 * ever read: a payer's balance (and wallet) before /verify, and on chain a settlement the
 * facilitator never confirmed (EIP-3009 `authorizationState`). The built-in networks have public
 * defaults; a configured entry replaces the default for its chain.
 */
import { isRecord, type Problems } from "./problems.ts";
import { parseHttpUrl } from "./server.ts";

/** Public endpoints of the built-in tokens' chains. */
export const DEFAULT_RPC_URLS: Readonly<Record<number, string>> = Object.freeze({
  8453: "https://mainnet.base.org",
  84532: "https://sepolia.base.org",
  43114: "https://api.avax.network/ext/bc/C/rpc",
  43113: "https://api.avax-test.network/ext/bc/C/rpc",
  137: "https://polygon-rpc.com",
  80002: "https://rpc-amoy.polygon.technology",
});

export function resolveRpcUrls(raw: unknown, problems: Problems): Record<number, string> {
  const urls: Record<number, string> = { ...DEFAULT_RPC_URLS };
  if (!isRecord(raw)) return urls;
  for (const [chain, value] of Object.entries(raw)) {
    const path = ["rpc_urls", chain];
    if (!/^[1-9][0-9]{0,18}$/.test(chain)) {
      problems.add(path, 'is not an EVM chain id; key each URL by its chain id, e.g. "8453": https://mainnet.base.org');
      continue;
    }
    if (typeof value !== "string") continue; // reported by the schema
    const url = parseHttpUrl(value, path, problems, "https://mainnet.base.org");
    if (url !== undefined) urls[Number(chain)] = url;
  }
  return urls;
}
