/**
 * `limits.max_refused_payments_per_minute` (ARCHITECTURE.md §11 "Hostile clients"). A payment that
 * passes the local checks but cannot settle (a fresh key with no funds, a smart-wallet signature)
 * costs one facilitator `/verify` call. Past this many such refusals within a minute, a client
 * address's further payments are turned away (429) before any facilitator call, until the oldest
 * refusal is a minute old. Off (0) by default, like `max_concurrent_per_client`: behind a proxy
 * every client shares one address until `server.trust_proxy` is set. Kept per replica, in memory.
 */
import { TooManyRequestsError } from "../errors.ts";
import type { VerifyBudget } from "../payment/work.ts";

const WINDOW_MS = 60_000;
/** Addresses kept before expired ones are swept, so that many addresses cannot grow the map for good. */
const SWEEP_AT = 10_000;

export class RefusedPayments {
  /** Times of each address's refusals within the last minute, oldest first. */
  private readonly refusals = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The /verify budget of one request from `address`; none when the limit is off or the address unknown. */
  budgetOf(address: string | null): VerifyBudget | undefined {
    if (this.max <= 0 || address === null) return undefined;
    return {
      check: () => {
        const recent = this.recent(address);
        if (recent.length < this.max) return;
        const seconds = Math.max(1, Math.ceil((recent[0]! + WINDOW_MS - this.now()) / 1000));
        throw new TooManyRequestsError(
          `The facilitator refused ${recent.length} payments from this client within a minute, ${this.max} being the most (limits.max_refused_payments_per_minute): retry in ${seconds} s with a payment from a funded wallet`,
          seconds,
        );
      },
      refused: () => {
        if (this.refusals.size >= SWEEP_AT) this.sweep();
        const recent = this.recent(address);
        recent.push(this.now());
        this.refusals.set(address, recent);
      },
    };
  }

  private recent(address: string): number[] {
    const since = this.now() - WINDOW_MS;
    const times = (this.refusals.get(address) ?? []).filter((time) => time > since);
    if (times.length === 0) this.refusals.delete(address);
    else this.refusals.set(address, times);
    return times;
  }

  private sweep(): void {
    for (const address of [...this.refusals.keys()]) this.recent(address);
  }
}
