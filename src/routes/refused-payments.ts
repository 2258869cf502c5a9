/**
 * `limits.max_refused_payments_per_minute` (ARCHITECTURE.md §11 "Hostile clients"). A payment that
 * passes the local checks costs a read of the chain (its payer's balance, payer-check.ts) and, if
 * that finds nothing wrong, a facilitator `/verify` call. Each such payment takes a place in its
 * client address's budget before either, and gives it back unless it is refused (by the chain's
 * answer or by the facilitator); with every place taken (refusals within the last minute, and
 * payments still being checked), the client's payments get 429 before any chain read or facilitator
 * call until the oldest refusal is a minute old. On by default (DESIGN.md §17), at 10 a minute: far
 * more than an honest buyer's mistakes; 0 turns it off. Behind a proxy every client shares one address
 * until `server.trust_proxy` is set. Kept per replica, in memory.
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
            `${places.length} payments from this client were refused or are being checked within a minute, ${this.max} being the most (limits.max_refused_payments_per_minute): retry in ${seconds} s with a payment from a funded wallet`,
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
