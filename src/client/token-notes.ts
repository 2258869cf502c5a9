/**
 * Warnings about a token, shown with a quote (stderr) and in `arrow402 tables`: the server's
 * claims that contradict what the buyer knows, and symbols that imitate a built-in token — from
 * the server or from the contract itself. They never change what is believed: amounts and budgets
 * use verified decimals only (tokens.ts).
 */
import { imitation } from "./lookalikes.ts";
import { quoted } from "./printable.ts";
import type { SellerClaim } from "./seller-claims.ts";
import type { TokenRef, Verification } from "./token-verification.ts";
import { builtinToken } from "./tokens.ts";

/** Each completes "suspicious: …". */
export function suspiciousNotes(token: TokenRef, verification: Verification | undefined, claim: SellerClaim | undefined): string[] {
  const { network, address } = token;
  const name = `token ${address} on ${network}`;
  const notes: string[] = [];
  const builtin = builtinToken(network, address);
  const contractSymbol = verification?.ok ? verification.contractSymbol : null;

  const selfImitation = contractSymbol === null ? null : imitation(contractSymbol, network, address);
  if (contractSymbol !== null && selfImitation !== null) {
    notes.push(`${name} calls itself ${quoted(contractSymbol)} but is not ${selfImitation.symbol} (${selfImitation.real})`);
  }
  const claimedSymbol = claim?.symbol ?? null;
  if (claimedSymbol !== null && claimedSymbol !== contractSymbol) {
    const claimed = imitation(claimedSymbol, network, address);
    if (claimed !== null) {
      notes.push(`the server calls ${name} ${quoted(claimedSymbol)}, but it is not ${claimed.symbol} (${claimed.real})`);
    } else if (contractSymbol !== null) {
      notes.push(`the server calls ${name} ${quoted(claimedSymbol)}; its contract says ${quoted(contractSymbol)}`);
    }
  }

  const known = builtin !== null ? { decimals: builtin.decimals, by: `it is the built-in ${builtin.symbol}, with` } : verifiedDecimals(verification);
  if (claim !== undefined && known !== null && claim.decimals !== known.decimals) {
    notes.push(`the server says ${name} has ${claim.decimals} decimals; ${known.by} ${known.decimals}`);
  }
  return notes;
}

function verifiedDecimals(verification: Verification | undefined): { decimals: number; by: string } | null {
  if (!verification?.ok) return null;
  const by = verification.token.source === "contract" ? "its contract says" : "you said (--token-decimals)";
  return { decimals: verification.token.decimals, by };
}
