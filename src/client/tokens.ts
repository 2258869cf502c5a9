/**
 * Tokens as the buyer sees them. An offer names a network and an asset address, nothing more the
 * buyer can trust: a token's decimals and symbol come only from what the buyer knows — the
 * built-in USDC deployments (ARCHITECTURE.md §2, matched by network and address), the token contract
 * read through the buyer's own RPC endpoint, or the buyer's own `--token-decimals` — never from
 * the seller, whose word decides how many smallest units a "0.05" is. Without verified decimals an
 * amount is shown in smallest units, which is exactly what would be signed.
 */
import { BUILTIN_TOKENS } from "../config/tokens.ts";
import { formatAmount } from "../config/amounts.ts";
import type { TokenInfo } from "../config/types.ts";

/** Where verified facts about a token come from. */
export type TokenSource = "built-in" | "contract" | "buyer";

/** What the buyer knows of a token that is not built in (from its contract, or said by the buyer). */
export interface VerifiedToken {
  decimals: number;
  /** Shown as the token's symbol; null when unknown or not fit to show (see token-notes.ts). */
  symbol: string | null;
  source: "contract" | "buyer";
}

export interface TokenView {
  network: string;
  /** The ERC-20 address as the server sent it. */
  address: string;
  /** null when the token is neither built in nor verified. */
  decimals: number | null;
  /** "USDC" for a built-in token, a verified symbol for another, else null. */
  symbol: string | null;
  /** null when nothing about the token is verified. */
  source: TokenSource | null;
  /** "Base Sepolia" for a built-in network, else the network id ("eip155:31337"). */
  networkLabel: string;
}

/** `network|address`, lower case: the key of a token across the client. */
export function tokenKey(network: string, address: string): string {
  return `${network}|${address}`.toLowerCase();
}

const BUILTIN_BY_KEY = new Map(Object.values(BUILTIN_TOKENS).map((token) => [tokenKey(token.network, token.address), token]));
const LABEL_BY_NETWORK = new Map<string, string>(Object.values(BUILTIN_TOKENS).map((token) => [token.network, token.networkLabel]));

/** The built-in token at exactly this network and address, if any. */
export function builtinToken(network: string, address: string): TokenInfo | null {
  return BUILTIN_BY_KEY.get(tokenKey(network, address)) ?? null;
}

/** The view of a token: a built-in token is always itself; another is what `verified` says, or unknown. */
export function tokenView(network: string, address: string, verified: VerifiedToken | null = null): TokenView {
  const builtin = builtinToken(network, address);
  if (builtin) {
    return { network, address, decimals: builtin.decimals, symbol: builtin.symbol, source: "built-in", networkLabel: builtin.networkLabel };
  }
  return {
    network,
    address,
    decimals: verified?.decimals ?? null,
    symbol: verified?.symbol ?? null,
    source: verified?.source ?? null,
    networkLabel: networkLabel(network),
  };
}

/** "Base Sepolia" for the built-in networks, else the CAIP-2 id itself. */
export function networkLabel(network: string): string {
  return LABEL_BY_NETWORK.get(network) ?? network;
}

/** "0.002 USDC", "0.002 of token 0x…", or "2000 smallest units of token 0x…". */
export function formatTokenAmount(units: bigint, token: TokenView): string {
  if (token.decimals === null) return `${units} smallest units of token ${token.address}`;
  const amount = formatAmount(units, token.decimals);
  return token.symbol === null ? `${amount} of token ${token.address}` : `${amount} ${token.symbol}`;
}

/** "0.002 USDC on Base Sepolia". */
export function formatPrice(units: bigint, token: TokenView): string {
  return `${formatTokenAmount(units, token)} on ${token.networkLabel}`;
}
