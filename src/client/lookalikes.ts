/**
 * Symbols that imitate a known token. Anyone can deploy a contract called "USDC" or have a server
 * say so; only the built-in deployment at its address on its network is that token. A symbol
 * imitates a built-in token when it reads the same after folding case, compatibility forms
 * (full-width, mathematical letters), invisible characters, separators and letters of other
 * scripts that look Latin ("USDС" with a Cyrillic С, "U.S.D.C", "ＵＳＤＣ"), and the token
 * is not that built-in token.
 */
import { BUILTIN_TOKENS } from "../config/tokens.ts";
import type { TokenInfo } from "../config/types.ts";
import { builtinToken } from "./tokens.ts";

/**
 * Characters that look like a Latin letter once lower-cased, as pairs `lookalike → letter`
 * (Cyrillic, Greek, Armenian, digits). A short list of the likely ones, not Unicode's full table.
 */
const CONFUSABLES: Readonly<Record<string, string>> = Object.freeze({
  // Cyrillic
  а: "a", в: "b", с: "c", ԁ: "d", е: "e", һ: "h", н: "h", і: "i", ј: "j", к: "k", ӏ: "l", м: "m",
  о: "o", р: "p", ԛ: "q", ѕ: "s", т: "t", у: "y", ү: "y", х: "x", ԝ: "w", ь: "b", г: "r",
  // Greek
  α: "a", β: "b", ε: "e", η: "n", ι: "i", κ: "k", μ: "u", ν: "v", ο: "o", ρ: "p", τ: "t", υ: "u", χ: "x", ζ: "z",
  // Armenian
  ս: "u", օ: "o", ո: "n", հ: "h", ց: "g",
  // Digits read as letters
  "0": "o", "1": "l", "5": "s",
});

/** Invisible characters, spaces and separators a symbol can be padded or split with. */
const IGNORED = /[\p{Cf}\p{Z}\s._\-·•/\\'"`*]/gu;

/** The form two symbols are compared in. */
export function symbolSkeleton(symbol: string): string {
  const folded = symbol.normalize("NFKC").replace(IGNORED, "").toLowerCase();
  return [...folded].map((char) => CONFUSABLES[char] ?? char).join("");
}

const BUILTIN_BY_SKELETON = new Map<string, TokenInfo[]>();
for (const token of Object.values(BUILTIN_TOKENS)) {
  const skeleton = symbolSkeleton(token.symbol);
  BUILTIN_BY_SKELETON.set(skeleton, [...(BUILTIN_BY_SKELETON.get(skeleton) ?? []), token]);
}

export interface Imitation {
  /** The built-in symbol imitated ("USDC"). */
  symbol: string;
  /** Where the real one is on this network, or that there is none: "USDC on Base Sepolia is 0x036C…". */
  real: string;
}

/** The built-in token `symbol` imitates when used for the token at `network`/`address`, else null. */
export function imitation(symbol: string, network: string, address: string): Imitation | null {
  const candidates = BUILTIN_BY_SKELETON.get(symbolSkeleton(symbol));
  if (candidates === undefined || candidates.length === 0) return null;
  const actual = builtinToken(network, address);
  if (actual !== null && candidates.includes(actual)) return null;
  const known = candidates[0]!.symbol;
  const onNetwork = candidates.find((token) => token.network === network);
  const real = onNetwork ? `${known} on ${onNetwork.networkLabel} is ${onNetwork.address}` : `this client knows no ${known} on ${network}`;
  return { symbol: known, real };
}
