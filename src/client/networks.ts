/**
 * The networks a key may pay on (`--network`): CAIP-2 ids (`eip155:84532`) or the names of the
 * built-in networks (`base-sepolia`, `base_sepolia`, `Base Sepolia`), repeatable or comma-separated.
 */
import { BUILTIN_TOKENS } from "../config/tokens.ts";

/** Name → chain id: the built-in networks by config key and by label, and the local devnet. */
export const NETWORK_NAMES: Readonly<Record<string, number>> = Object.freeze({
  ...Object.fromEntries(
    Object.values(BUILTIN_TOKENS).flatMap((token) => [
      [nameKey(token.key.slice(token.key.indexOf("/") + 1)), token.chainId],
      [nameKey(token.networkLabel), token.chainId],
    ]),
  ),
  devnet: 31337,
});

function nameKey(name: string): string {
  return name.trim().toLowerCase().replace(/[\s_]+/g, "-");
}

export type NetworksParse = { ok: true; networks: string[] } | { ok: false; reason: string };

/** Parses every `--network` value; an empty list means "any network". Order is preference. */
export function parseNetworks(values: readonly string[]): NetworksParse {
  const networks: string[] = [];
  for (const item of values.flatMap((value) => value.split(","))) {
    const text = item.trim();
    if (text === "") continue;
    const network = /^eip155:[1-9][0-9]*$/.test(text) ? text : chainOf(text);
    if (network === null) {
      const names = Object.keys(NETWORK_NAMES).join(", ");
      return { ok: false, reason: `--network '${text}' is not a network: use eip155:<chain id> or one of ${names}` };
    }
    if (!networks.includes(network)) networks.push(network);
  }
  return { ok: true, networks };
}

function chainOf(name: string): string | null {
  const chainId = NETWORK_NAMES[nameKey(name)];
  return chainId === undefined ? null : `eip155:${chainId}`;
}
