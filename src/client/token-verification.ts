/**
 * Verifying the tokens of a server's offers before any amount is shown or compared with a budget:
 * a built-in token is known; another is known from the buyer's `--token-decimals`, else from its
 * contract through the buyer's RPC endpoint for that network, else not at all — then the reason
 * says exactly how to allow it. Nothing is cached across runs: every run asks again.
 */
import { imitation } from "./lookalikes.ts";
import { readTokenContract } from "./token-contract.ts";
import { parseTokenStatements, statedDecimals, type TokenStatements } from "./token-statements.ts";
import { builtinToken, tokenKey, type VerifiedToken } from "./tokens.ts";
import { parseRpcEndpoints, RPC_ENV, type RpcEndpoints } from "./rpc.ts";

export interface TokenSources {
  rpc: RpcEndpoints;
  statements: TokenStatements;
}

export const NO_SOURCES: TokenSources = { rpc: new Map(), statements: new Map() };

export interface TokenRef {
  network: string;
  address: string;
}

export type Verification =
  /** `contractSymbol`: what the contract calls itself, shown or not (see `displaySymbol`). */
  | { ok: true; token: VerifiedToken; contractSymbol: string | null }
  /** `reason` completes "…: " and says how to allow the token. */
  | { ok: false; reason: string };

/** Verifications by tokenKey, for every distinct token given that is not built in. */
export async function verifyTokens(tokens: readonly TokenRef[], sources: TokenSources): Promise<Map<string, Verification>> {
  const distinct = new Map<string, TokenRef>();
  for (const token of tokens) {
    if (builtinToken(token.network, token.address) === null) distinct.set(tokenKey(token.network, token.address), token);
  }
  const entries = await Promise.all(
    [...distinct].map(async ([key, token]) => [key, await verifyToken(token, sources)] as const),
  );
  return new Map(entries);
}

async function verifyToken({ network, address }: TokenRef, sources: TokenSources): Promise<Verification> {
  const stated = statedDecimals(sources.statements, network, address);
  if (stated !== null) return { ok: true, token: { decimals: stated, symbol: null, source: "buyer" }, contractSymbol: null };
  const url = sources.rpc.get(network);
  const statement = `--token-decimals ${network}:${address}=DECIMALS`;
  if (url === undefined) {
    return {
      ok: false,
      reason:
        `token ${address} on ${network} is not built in and its decimals are unverified (the server's word is not taken); ` +
        `pass --rpc ${network}=URL (an RPC endpoint of that chain, or set ${RPC_ENV}) to read them from the token contract, ` +
        `or state them yourself with ${statement}`,
    };
  }
  const read = await readTokenContract(url, network, address);
  if (!read.ok) return { ok: false, reason: `${read.reason}; fix --rpc ${network}=URL, or state the decimals yourself with ${statement}` };
  const symbol = displaySymbol(read.symbol, network, address);
  return { ok: true, token: { decimals: read.decimals, symbol, source: "contract" }, contractSymbol: read.symbol };
}

/**
 * A contract's symbol is shown beside amounts only when it is plain (ASCII letters, digits and
 * `$.+_-`, at most 20) and does not imitate a built-in token: anyone can deploy a "USDC".
 */
export function displaySymbol(symbol: string | null, network: string, address: string): string | null {
  if (symbol === null || !/^[A-Za-z0-9$.+_-]{1,20}$/.test(symbol)) return null;
  return imitation(symbol, network, address) === null ? symbol : null;
}

export type SourcesParse = { ok: true; sources: TokenSources } | { ok: false; reason: string };

/** `--rpc` values with `ARROW402_RPC`, and `--token-decimals` values, as one set of sources. */
export function parseTokenSources(rpcFlags: readonly string[], statementFlags: readonly string[], env: Record<string, string | undefined>): SourcesParse {
  const rpc = parseRpcEndpoints(rpcFlags, env);
  if (!rpc.ok) return rpc;
  const statements = parseTokenStatements(statementFlags);
  if (!statements.ok) return statements;
  return { ok: true, sources: { rpc: rpc.endpoints, statements: statements.statements } };
}
