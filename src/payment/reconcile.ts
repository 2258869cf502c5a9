/**
 * `arrow402 payments --reconcile` (ARCHITECTURE.md §6 "Crashes"): resolves every unconfirmed settlement
 * attempt through the chain, as the payment core does for one attempt when its buyer comes back.
 *
 * Per attempt, under the payment's claim (the one-request-per-payment lock every server shares, so
 * a server settling it right now is never overtaken):
 *   - used on chain by this payment → confirmed settled, with the transaction whose AuthorizationUsed
 *     log is followed by the payment's Transfer, searched between the attempt and its validBefore;
 *   - used, but those logs prove neither payment nor cancellation → left, saying what to look up;
 *   - cancelled, or its nonce spent by another authorization (chain.ts) → removed: it moved nothing;
 *   - not used, and the chain's latest block is at or past `validBefore` → removed: the
 *     authorization can never move money now (EIP-3009 requires block.timestamp < validBefore);
 *   - not used and still valid → left, saying until when it can be used;
 *   - no RPC endpoint for its chain, or the endpoint failed → left, naming the `rpc_urls` entry;
 *   - claimed by a server → left (it is being settled, or its holder stopped less than a claim's
 *     lease ago: store/leases.ts).
 * A store failure is the only real failure (`failed`): the command then exits non-zero.
 */
import { LedgerUnavailableError } from "../errors.ts";
import type { AuthorizationCheck, AuthorizationChecker } from "./authorization-check.ts";
import type { Claim, PaymentRecord, PaymentStore } from "./store.ts";

export type ReconcileOutcome = "confirmed" | "removed" | "left" | "failed";

export interface ReconcileStep {
  record: PaymentRecord;
  outcome: ReconcileOutcome;
  /** One sentence: what was found, what was done, and what to do next when something is left. */
  detail: string;
}

export interface ReconcileDeps {
  store: PaymentStore;
  chain: AuthorizationChecker;
  now?: () => number;
}

export async function reconcileAttempts(deps: ReconcileDeps): Promise<ReconcileStep[]> {
  const steps: ReconcileStep[] = [];
  for (const record of await deps.store.unconfirmed()) steps.push(await reconcileOne(deps, record));
  return steps;
}

async function reconcileOne(deps: ReconcileDeps, listed: PaymentRecord): Promise<ReconcileStep> {
  const step = (outcome: ReconcileOutcome, detail: string, record = listed): ReconcileStep => ({ record, outcome, detail });
  try {
    // Renewed while the chain is read (store/leases.ts): if reconcile itself is killed, servers may
    // take the payment again within the claim's lease.
    const claim = await deps.store.claim(listed.paymentKey);
    if (claim === null) {
      return step("left", "a server holds this payment right now (it is settling it, or it stopped a few seconds ago and its claim has not run out yet): left unconfirmed; run --reconcile again in a minute.");
    }
    try {
      // A server may have finished it between the listing and the claim.
      const record = await deps.store.find(listed.paymentKey);
      if (record === undefined) return step("removed", "a server removed this attempt meanwhile (nothing was charged).");
      if (record.status === "settled") return step("confirmed", `a server confirmed this settlement meanwhile (transaction ${record.transaction || "unknown"}).`, record);
      return await resolve(deps, record, claim, await deps.chain.check(authorizationOf(record)));
    } finally {
      // What was done stands even if the release fails; the claim then runs out within its lease.
      await claim.release().catch(() => {});
    }
  } catch (error) {
    // The buyer-facing wording of LedgerUnavailableError ("nothing was charged") is not the operator's.
    const reason = error instanceof LedgerUnavailableError ? "it cannot be reached" : (error as Error).message;
    return step("failed", `the payment ledger failed (${reason}): check that it is reachable, then run --reconcile again.`);
  }
}

async function resolve(deps: ReconcileDeps, record: PaymentRecord, claim: Claim, found: AuthorizationCheck): Promise<ReconcileStep> {
  const step = (outcome: ReconcileOutcome, detail: string): ReconcileStep => ({ record, outcome, detail });
  /** Removed only while reconcile still holds the claim: a server that took the payment over keeps it. */
  const removed = async (detail: string) =>
    (await deps.store.abandon(record.paymentKey, claim))
      ? step("removed", detail)
      : step("left", "a server took this payment over while the chain was read (reconcile stalled longer than its claim's lease): left unconfirmed; run --reconcile again.");
  switch (found.kind) {
    case "no-rpc":
      return step(
        "left",
        `there is no JSON-RPC endpoint for chain ${found.chainId}: left unconfirmed; add rpc_urls: { "${found.chainId}": <the chain's JSON-RPC URL> } to the config, then run --reconcile again.`,
      );
    case "rpc-failed":
      return step(
        "left",
        `the JSON-RPC endpoint for chain ${found.chainId} (${found.endpoint}) failed: ${found.reason}; left unconfirmed: check rpc_urls "${found.chainId}" (or set another endpoint there), then run --reconcile again.`,
      );
    case "used": {
      const { hash: transaction, minedAt: settledAt } = found.transaction;
      await deps.store.confirm(record.paymentKey, { transaction, payer: record.payer, settledAt, rows: record.rows, answer: null });
      return step("confirmed", `used on chain in transaction ${transaction} (mined ${settledAt.toISOString()}): confirmed settled.`);
    }
    case "unproven": {
      const nonce = nonceOf(record);
      const where = `blocks ${found.range.fromBlock}–${found.range.toBlock}, from the attempt to its validBefore`;
      const what =
        found.transaction === null
          ? `no log of token ${record.asset} in ${where} says how`
          : `transaction ${found.transaction} (in ${where}) moved this amount to its payTo, but not right after marking the nonce used, as the token's transfers do`;
      return step(
        "left",
        `used on chain, but ${what}: left unconfirmed; look up authorizer ${record.payer}, nonce ${nonce} on a block explorer.`,
      );
    }
    case "consumed": {
      const where = found.transaction === null ? "" : ` in transaction ${found.transaction}`;
      const how = found.cancelled ? `cancelled on chain${where}` : `spent on chain${where} by another authorization with its nonce, which did not pay this attempt's amount to its payTo`;
      return removed(`its authorization was ${how}, so this attempt moved nothing and never will: removed.`);
    }
    case "unused": {
      const expires = isoSeconds(record.validBefore);
      if (found.chainTime >= record.validBefore) {
        return removed(
          `never used on chain, and its authorization expired at ${expires} (the chain's latest block is at ${isoSeconds(found.chainTime)}), so it can never move money: removed.`,
        );
      }
      return step(
        "left",
        `not used on chain yet, and its authorization can still be used until ${expires} (the chain's latest block is at ${isoSeconds(found.chainTime)}): left unconfirmed; run --reconcile again after that time.`,
      );
    }
  }
}

/** The authorization a record stands for, from its key: network|asset|from|nonce (payload.ts `paymentKey`). */
function authorizationOf(record: PaymentRecord) {
  const [network = "", asset = "", from = "", nonce = ""] = record.paymentKey.split("|");
  return { network, asset, from, nonce, payTo: record.payTo, amount: record.amount, attemptedAt: record.settledAt, validBefore: record.validBefore };
}

function nonceOf(record: PaymentRecord): string {
  return authorizationOf(record).nonce;
}

function isoSeconds(seconds: bigint): string {
  // validBefore is a uint256: a far-future value is shown as such rather than as an invalid date.
  const ms = Number(seconds) * 1000;
  return Number.isFinite(ms) && ms <= 8.64e15 ? new Date(ms).toISOString() : `${seconds} (Unix seconds)`;
}
