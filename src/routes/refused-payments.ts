/**
 * `limits.max_refused_payments_per_minute` (ARCHITECTURE.md §11 "Hostile clients"). A payment that
 * passes the local checks but cannot settle (a fresh key with no funds, a smart-wallet signature)
 * costs one facilitator `/verify` call. Each call takes a place in its client address's budget
 * before it is sent, and gives it back unless the facilitator refuses the payment; with every place
 * taken (refusals within the last minute, and calls still in flight), the client's payments get 429
 * before any facilitator call until the oldest refusal is a minute old. Off (0) by default, like
 * `max_concurrent_per_client`: behind a proxy every client shares one address until
 * `server.trust_proxy` is set. Kept per replica, in memory.
 */
import { TooManyRequestsError } from "../errors.ts";
import type { VerifyBudget } from "../payment/work.ts";

const WINDOW_MS = 60_000;
/** Addresses kept before expired ones are swept, so that many addresses cannot grow the map for good. */
const SWEEP_AT = 10_000;

export class RefusedPayments {
  /**
   * @param taken each client's places taken within the last minute (when taken), oldest first;
   *   kept across reloads (client-limit.ts ClientCounts).
   */
  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
    private readonly taken = new Map<string, number[]>(),
  ) {}

  /** The /verify budget of one request from `address`; none when the limit is off or the address unknown. */
  budgetOf(address: string | null): VerifyBudget | undefined {
    if (this.max <= 0 || address === null) return undefined;
    return {
      take: () => {
        const places = this.recent(address);
        if (places.length >= this.max) {
          const seconds = Math.max(1, Math.ceil((places[0]! + WINDOW_MS - this.now()) / 1000));
          throw new TooManyRequestsError(
            `The facilitator refused or is checking ${places.length} payments from this client within a minute, ${this.max} being the most (limits.max_refused_payments_per_minute): retry in ${seconds} s with a payment from a funded wallet`,
            seconds,
          );
        }
        if (this.taken.size >= SWEEP_AT) this.sweep();
        const time = this.now();
        places.push(time);
        this.taken.set(address, places);
        return () => {
          const current = this.taken.get(address);
          const at = current?.indexOf(time) ?? -1;
          if (at >= 0) current!.splice(at, 1);
        };
      },
    };
  }

  private recent(address: string): number[] {
    const since = this.now() - WINDOW_MS;
    const times = (this.taken.get(address) ?? []).filter((time) => time > since);
    if (times.length === 0) this.taken.delete(address);
    else this.taken.set(address, times);
    return times;
  }

  private sweep(): void {
    for (const address of [...this.taken.keys()]) this.recent(address);
  }
}
