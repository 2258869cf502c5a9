/**
 * The `tokens:` section (ARCHITECTURE.md §2): extra tokens beyond the built-in USDC deployments, e.g. a
 * devnet token. A custom key may not shadow a built-in one, even in another letter case, so a
 * price tag's `token:` always means what the documentation says it means.
 */
import { checkAddress } from "./addresses.ts";
import { isRecord, type Problems } from "./problems.ts";
import { BUILTIN_TOKENS, customToken } from "./tokens.ts";
import type { TokenInfo } from "./types.ts";

/** `name` or `name/variant`: letters, digits, '_', '-', '.'. */
const TOKEN_KEY = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/;

export interface ResolvedTokens {
  /** Built-in plus valid custom tokens, by key. */
  tokens: Record<string, TokenInfo>;
  /** Custom keys whose entry has a problem: price tags naming them are not reported again. */
  broken: Set<string>;
}

export function resolveTokens(raw: unknown, problems: Problems): ResolvedTokens {
  const tokens: Record<string, TokenInfo> = { ...BUILTIN_TOKENS };
  const broken = new Set<string>();
  if (!isRecord(raw)) return { tokens, broken };
  const builtinKeys = new Map(Object.keys(BUILTIN_TOKENS).map((key) => [key.toLowerCase(), key]));
  for (const [key, entry] of Object.entries(raw)) {
    const path = ["tokens", key];
    const shadowed = builtinKeys.get(key.toLowerCase());
    if (shadowed !== undefined) {
      problems.add(path, `${shadowed} is a built-in token; choose another key for a custom token, e.g. ${shadowed}_custom`);
      continue;
    }
    if (!TOKEN_KEY.test(key)) {
      problems.add(path, "token keys use letters, digits, '_', '-', '.' and at most one '/', e.g. usdc/devnet");
      broken.add(key);
      continue;
    }
    if (!isRecord(entry)) {
      broken.add(key);
      continue;
    }
    const { chain, address, name, version, decimals, symbol, network_label: networkLabel } = entry;
    const chainId = typeof chain === "string" ? Number(chain) : chain;
    if (typeof chainId === "number" && Number.isInteger(chainId) && !Number.isSafeInteger(chainId)) {
      problems.add([...path, "chain"], `chain id ${String(chain)} is too large; write the EVM chain id, e.g. "31337"`);
    }
    const checked = typeof address === "string" ? checkAddress(address, [...path, "address"], problems, { allowZero: false }) : undefined;
    if (
      checked === undefined ||
      typeof chainId !== "number" ||
      !Number.isSafeInteger(chainId) ||
      typeof name !== "string" ||
      typeof version !== "string" ||
      typeof decimals !== "number" ||
      !Number.isInteger(decimals) ||
      decimals < 0 ||
      decimals > 255
    ) {
      broken.add(key);
      continue;
    }
    tokens[key] = customToken(key, {
      chainId,
      address: checked,
      name,
      version,
      decimals,
      ...(typeof symbol === "string" ? { symbol } : {}),
      ...(typeof networkLabel === "string" ? { networkLabel } : {}),
    });
  }
  return { tokens, broken };
}
