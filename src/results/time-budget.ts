/**
 * The query time limit (ARCHITECTURE.md §2 `limits.query_timeout_ms`). bun:sqlite cannot interrupt a
 * statement, so on expiry the caller terminates the worker; time the worker spends waiting for a
 * slow reader (back-pressure) is not counted against the query.
 */
import { BadRequestError } from "../errors.ts";

/** A time limit that can be paused while the worker waits on a slow reader. */
export class TimeBudget {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private startedAt = 0;
  private stopped = false;

  constructor(
    private remainingMs: number,
    private readonly onExpire: () => void,
  ) {}

  start(): void {
    if (this.stopped || this.timer) return;
    this.startedAt = performance.now();
    this.timer = setTimeout(() => {
      this.stopped = true;
      this.onExpire();
    }, this.remainingMs);
  }

  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.remainingMs -= performance.now() - this.startedAt;
  }

  resume(): void {
    this.start();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export function timeLimitError(ms: number): BadRequestError {
  return new BadRequestError(
    `The query ran longer than the ${ms} ms limit and was stopped: add a WHERE condition or a smaller LIMIT`,
  );
}
