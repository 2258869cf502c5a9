/**
 * A fixed pool of query workers. Queries run off the HTTP thread so a long scan never stalls
 * other requests; a worker that overruns its time limit is terminated and replaced, because
 * bun:sqlite cannot interrupt a running statement.
 */
import { ServerBusyError } from "../errors.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";

/**
 * In the compiled executable, worker.ts is an extra entrypoint (see `bun run build`) embedded
 * under the entrypoints' common root (src/), and the bundle's import.meta.url is the executable.
 */
const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? "./db/worker.ts"
  : new URL("./worker.ts", import.meta.url).href;

export interface WorkerSlot {
  worker: Worker;
  /** Receives the worker's messages for the current job. */
  onMessage: ((message: FromWorker) => void) | null;
}

export class WorkerPool {
  private readonly idle: WorkerSlot[] = [];
  private readonly waiting: ((slot: WorkerSlot) => void)[] = [];
  private readonly all = new Set<WorkerSlot>();
  private closed = false;

  constructor(
    private readonly dbPath: string,
    readonly size: number,
    /** How long a worker's read waits for a writer's lock; the query time limit still applies. */
    private readonly busyTimeoutMs: number,
  ) {
    for (let i = 0; i < size; i++) this.idle.push(this.spawn());
  }

  private spawn(): WorkerSlot {
    const worker = new Worker(WORKER_URL);
    const slot: WorkerSlot = { worker, onMessage: null };
    worker.onmessage = (event: MessageEvent<FromWorker>) => slot.onMessage?.(event.data);
    worker.postMessage({ type: "open", path: this.dbPath, busyTimeoutMs: this.busyTimeoutMs } satisfies ToWorker);
    // An idle worker must not keep the process alive.
    (worker as Worker & { unref?: () => void }).unref?.();
    this.all.add(slot);
    return slot;
  }

  /**
   * A free worker, or the next one to become free. A request that cannot get one within
   * `waitMs` is turned away (503) rather than queued without bound behind slow queries.
   */
  acquire(waitMs: number): Promise<WorkerSlot> {
    if (this.closed) return Promise.reject(new Error("worker pool is closed"));
    const slot = this.idle.pop();
    if (slot) return Promise.resolve(slot);
    return new Promise((resolve, reject) => {
      const waiter = (slot: WorkerSlot) => {
        clearTimeout(timer);
        resolve(slot);
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new ServerBusyError(`All ${this.size} query workers stayed busy for ${waitMs} ms: retry shortly`));
      }, waitMs);
      this.waiting.push(waiter);
    });
  }

  /** A worker that is free right now, or null: for work that helps a query but must not wait. */
  tryAcquire(): WorkerSlot | null {
    return this.closed ? null : (this.idle.pop() ?? null);
  }

  release(slot: WorkerSlot): void {
    slot.onMessage = null;
    this.handOver(slot);
  }

  /** Terminates a busy worker (time limit, client gone) and puts a fresh one in its place. */
  replace(slot: WorkerSlot): void {
    slot.onMessage = null;
    slot.worker.terminate();
    this.all.delete(slot);
    if (!this.closed) this.handOver(this.spawn());
  }

  private handOver(slot: WorkerSlot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.idle.push(slot);
  }

  close(): void {
    this.closed = true;
    for (const slot of this.all) slot.worker.terminate();
    this.all.clear();
    this.idle.length = 0;
  }
}
