/**
 * The buyer's RPC endpoints, one per network, through which a token contract's own `decimals()`
 * and `symbol()` are read: `--rpc NETWORK=URL` (repeatable) and the environment variable
 * `ARROW402_RPC` (entries separated by spaces or commas; `--rpc` wins for the same network). The
 * variable exists because RPC URLs often carry an API key, and a command line is visible to other
 * users of the machine; for the same reason a message names an endpoint by its origin only.
 */
import { parseNetworks } from "./networks.ts";

export const RPC_ENV = "ARROW402_RPC";

/** network (`eip155:84532`) → RPC URL. */
export type RpcEndpoints = ReadonlyMap<string, string>;

export type RpcParse = { ok: true; endpoints: Map<string, string> } | { ok: false; reason: string };

const EXAMPLE = "eip155:84532=https://sepolia.base.org";

export function parseRpcEndpoints(flags: readonly string[], env: Record<string, string | undefined>): RpcParse {
  const endpoints = new Map<string, string>();
  const fromEnv = (env[RPC_ENV] ?? "").split(/[\s,]+/).filter((entry) => entry !== "");
  for (const [entries, where] of [
    [fromEnv, `${RPC_ENV} entry`],
    [flags, "--rpc"],
  ] as const) {
    for (const entry of entries) {
      const parsed = parseEntry(entry, where);
      if (!parsed.ok) return parsed;
      endpoints.set(parsed.network, parsed.url);
    }
  }
  return { ok: true, endpoints };
}

type EntryParse = { ok: true; network: string; url: string } | { ok: false; reason: string };

function parseEntry(entry: string, where: string): EntryParse {
  const split = entry.indexOf("=");
  // The URL is not echoed: it may carry an API key.
  const shown = split === -1 ? "an entry" : `'${entry.slice(0, split)}=…'`;
  if (split <= 0) return { ok: false, reason: `${where} ${shown} is not NETWORK=URL: write e.g. ${EXAMPLE}` };
  const networks = parseNetworks([entry.slice(0, split)]);
  if (!networks.ok) return { ok: false, reason: `${where} ${shown}: ${networks.reason.replace(/^--network /, "")}` };
  const network = networks.networks[0];
  if (network === undefined || networks.networks.length !== 1) {
    return { ok: false, reason: `${where} ${shown} names more than one network: give one NETWORK=URL per entry, e.g. ${EXAMPLE}` };
  }
  const url = entry.slice(split + 1);
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    return { ok: false, reason: `${where} ${shown}: the URL is not a URL; write e.g. ${EXAMPLE}` };
  }
  if (parsedUrl.protocol !== "http:" && parsedUrl.protocol !== "https:") {
    return { ok: false, reason: `${where} ${shown}: the RPC URL must be http(s), e.g. ${EXAMPLE}` };
  }
  return { ok: true, network, url };
}

/** The endpoint as messages show it: its origin, without path, query or credentials. */
export function describeEndpoint(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the RPC endpoint";
  }
}
