/**
 * Tokens as the buyer sees them: an offer names a network and an asset address; the built-in USDC
 * deployments (DESIGN.md §2) are known by symbol and decimals, any other token is shown by its
 * address, in decimal units when its decimals are known (e.g. from the table endpoint's
 * `token.decimals`) and in smallest units otherwise — never guessed.
 */
import { BUILTIN_TOKENS } from "../config/tokens.ts";
import { formatAmount } from "../config/amounts.ts";

export interface TokenView {
  network: string;
  /** The ERC-20 address as the server sent it. */
  address: string;
  /** null when neither built in nor told by the server. */
  decimals: number | null;
  /** "USDC" for a built-in token, the server's symbol for another, else null. */
  symbol: string | null;
  /** "Base Sepolia" for a built-in network, else the network id ("eip155:31337"). */
  networkLabel: string;
}

/** `network|address`, lower case: the key of a token across the client. */
export function tokenKey(network: string, address: string): string {
  return `${network}|${address}`.toLowerCase();
}

const BUILTIN_BY_KEY = new Map(Object.values(BUILTIN_TOKENS).map((token) => [tokenKey(token.network, token.address), token]));
const LABEL_BY_NETWORK = new Map<string, string>(Object.values(BUILTIN_TOKENS).map((token) => [token.network, token.networkLabel]));

/** What a server says of a token it prices in (`price_tags[].token`): decimals, and a symbol if it sends one. */
export interface TokenFacts {
  decimals: number;
  symbol: string | null;
}

/** The view of a token; facts from elsewhere (the server) are used only for tokens not built in. */
export function tokenView(network: string, address: string, facts: TokenFacts | number | null = null): TokenView {
  const builtin = BUILTIN_BY_KEY.get(tokenKey(network, address));
  if (builtin) {
    return { network, address, decimals: builtin.decimals, symbol: builtin.symbol, networkLabel: builtin.networkLabel };
  }
  const known = typeof facts === "number" ? { decimals: facts, symbol: null } : facts;
  return { network, address, decimals: known?.decimals ?? null, symbol: known?.symbol ?? null, networkLabel: networkLabel(network) };
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
