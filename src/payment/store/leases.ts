/**
 * The claims one store handle holds, kept alive while their requests work (DESIGN §16 "A
 * payment's claim outlives no holder"; ARCHITECTURE.md §11 "Replicas"). A claim is a row with a
 * short lease: a process that dies stops renewing, and its payments are free again within
 * CLAIM_LEASE_MS, so a buyer presenting the same payment to the restarted server or another
 * replica is served (§6 "Crashes") rather than told for minutes that it is in use. A request that
 * works longer (a slow query, a facilitator taking its full timeout, the chain read after a failed
 * /settle) keeps its claim for as long as it works.
 *
 * One timer per handle renews every claim the handle holds in one store statement, every third of
 * the lease, and only while some claim is held: the cost does not grow with the requests in
 * flight, and a lease survives two missed renewals (a slow ledger, a busy event loop).
 *
 * A renewal that does not find a claim marks it lost: its lease ran out and another request took
 * the payment over (or a starting process cleared it as expired). The payment core then stops
 * before /settle, and the store refuses `abandon` to a holder without its claim.
 */
import type { Claim } from "../store.ts";

/** How long a claim lives without renewal: how long a dead holder keeps its payments. */
export const CLAIM_LEASE_MS = 5_000;

export interface HeldClaim {
  paymentKey: string;
  holder: string;
}

/**
 * Extends, by `leaseMs`, the lease of each of `claims` still held by its holder (whether or not
 * its lease has run out, as long as nobody took it), and returns the holders it found.
 */
export type RenewClaims = (claims: readonly HeldClaim[], leaseMs: number) => Promise<Iterable<string>> | Iterable<string>;

export interface Leases {
  readonly leaseMs: number;
  /** A claim just taken, renewed from now on; `drop` deletes its row (this holder's only). */
  hold(claim: HeldClaim, drop: () => Promise<void> | void): Claim;
  /** The handle is closing: no more renewals. */
  stop(): void;
}

export function createLeases(renew: RenewClaims, leaseMs = CLAIM_LEASE_MS): Leases {
  const held = new Map<string, HeldClaim & { lost: boolean }>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  function schedule(): void {
    if (timer !== null || stopped || held.size === 0) return;
    timer = setTimeout(renewHeld, Math.max(1, Math.floor(leaseMs / 3)));
    // Renewal never keeps a process alive by itself: a holder's own work does.
    timer.unref();
  }

  async function renewHeld(): Promise<void> {
    const batch = [...held.values()];
    try {
      const found = new Set(await renew(batch, leaseMs));
      for (const entry of batch) {
        // Released meanwhile: not lost, just gone.
        if (found.has(entry.holder) || held.get(entry.holder) !== entry) continue;
        entry.lost = true;
        held.delete(entry.holder);
      }
    } catch {
      // The ledger did not answer: the claims are neither renewed nor known to be lost; the next
      // renewal tries again (a lease outlives two missed renewals).
    }
    timer = null;
    schedule();
  }

  return {
    leaseMs,
    hold(claim, drop) {
      const entry = { ...claim, lost: false };
      held.set(claim.holder, entry);
      schedule();
      let released = false;
      return {
        holder: claim.holder,
        get lost() {
          return entry.lost;
        },
        async release() {
          if (released) return;
          released = true;
          held.delete(claim.holder);
          await drop();
        },
      };
    },
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      held.clear();
    },
  };
}
