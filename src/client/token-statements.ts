/**
 * The buyer's own word about a token's decimals: `--token-decimals [NETWORK:]ADDRESS=N`
 * (repeatable). It is an explicit opt-in for a token that is not built in when no RPC endpoint is
 * at hand; without NETWORK it holds for that address on every network. A built-in token needs
 * none and cannot be overridden.
 */
import { getAddress } from "viem";
import { parseNetworks } from "./networks.ts";
import { builtinToken, tokenKey } from "./tokens.ts";

/** Decimals by `tokenKey(network, address)`, or by `*|address` for every network. */
export type TokenStatements = ReadonlyMap<string, number>;

export type StatementsParse = { ok: true; statements: Map<string, number> } | { ok: false; reason: string };

const ADDRESS_AT_END = /0x[0-9a-fA-F]{40}$/;
const EXAMPLE = "--token-decimals eip155:31337:0x5FbDB2315678afecb367f032d93F642f64180aa3=6";

export function parseTokenStatements(values: readonly string[]): StatementsParse {
  const statements = new Map<string, number>();
  for (const value of values) {
    const split = value.lastIndexOf("=");
    const target = split === -1 ? value : value.slice(0, split);
    const decimalsText = split === -1 ? "" : value.slice(split + 1).trim();
    const address = ADDRESS_AT_END.exec(target)?.[0];
    if (address === undefined || !/^\d{1,3}$/.test(decimalsText) || Number(decimalsText) > 255) {
      return { ok: false, reason: `--token-decimals '${value}' is not [NETWORK:]ADDRESS=DECIMALS (0 to 255): write e.g. ${EXAMPLE}` };
    }
    const decimals = Number(decimalsText);
    const prefix = target.slice(0, target.length - address.length);
    if (prefix === "") {
      statements.set(tokenKey("*", address), decimals);
      continue;
    }
    const networks = prefix.endsWith(":") ? parseNetworks([prefix.slice(0, -1)]) : null;
    const network = networks?.ok && networks.networks.length === 1 ? networks.networks[0]! : null;
    if (network === null) {
      return { ok: false, reason: `--token-decimals '${value}': '${prefix.slice(0, -1)}' is not one network; write e.g. ${EXAMPLE}` };
    }
    const builtin = builtinToken(network, address);
    if (builtin !== null && builtin.decimals !== decimals) {
      return {
        ok: false,
        reason: `--token-decimals '${value}': ${getAddress(address)} is the built-in ${builtin.symbol} on ${builtin.networkLabel}, with ${builtin.decimals} decimals`,
      };
    }
    statements.set(tokenKey(network, address), decimals);
  }
  return { ok: true, statements };
}

/** What the buyer said of this token, if anything. */
export function statedDecimals(statements: TokenStatements, network: string, address: string): number | null {
  return statements.get(tokenKey(network, address)) ?? statements.get(tokenKey("*", address)) ?? null;
}
