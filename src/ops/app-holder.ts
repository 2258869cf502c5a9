/**
 * The app the listening server answers with, swappable in one step (SIGHUP, ARCHITECTURE.md §11): each
 * request is handed to the app current when it arrived and is answered by it to the end, so it
 * sees the old config or the new one, never a mix. It also knows how many handlers are still
 * running, so shutdown can wait for a paid request still settling after its client has gone.
 */
import type { App } from "../app.ts";

export class AppHolder {
  private current: App | null = null;
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  readonly fetch = async (request: Request): Promise<Response> => {
    const app = this.current;
    if (app === null) return new Response("Starting: retry shortly", { status: 503, headers: { "retry-after": "1" } });
    this.running++;
    try {
      return await app.fetch(request);
    } finally {
      if (--this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  };

  swap(app: App): void {
    this.current = app;
  }

  /** Handlers that have not returned their response yet. */
  get handlers(): number {
    return this.running;
  }

  /** Resolves once no handler is running. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
