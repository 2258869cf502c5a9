/**
 * A fixed pool of query workers. Queries run off the HTTP thread so a long scan never stalls
 * other requests; a worker that overruns its time limit is terminated and replaced, because
 * bun:sqlite cannot interrupt a running statement.
 *
 * Two lanes (ARCHITECTURE.md §11 "Hostile clients"): bulk work (full scans without a small LIMIT, see
 * lanes.ts) may hold at most all workers but one, so interactive queries always find one free
 * soon, however many exports are running or waiting.
 */
import { ServerBusyError } from "../../errors.ts";
import type { FromWorker, ToWorker } from "./protocol.ts";

/**
 * In the compiled executable, worker.ts is an extra entrypoint (see `bun run build`) embedded
 * under the entrypoints' common root (src/), and the bundle's import.meta.url is the executable.
 */
const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? "./engines/sqlite/worker.ts"
  : new URL("./worker.ts", import.meta.url).href;

export type Lane = "interactive" | "bulk";

export interface WorkerSlot {
  worker: Worker;
  /** Receives the worker's messages for the current job. */
  onMessage: ((message: FromWorker) => void) | null;
  /** What the slot is doing: a job of a lane, or nothing. */
  use: Lane | null;
  /** Set to 1 to make the worker abandon its statement within a row (engines/sqlite/guard.ts). */
  stop: Int32Array;
}

/**
 * A worker asked to stop a job (`recall`) has this long to say it did before it is replaced. It
 * answers within a batch's work, a few milliseconds on an idle machine and hundreds on two loaded
 * cores; a restart costs more than the wait (a fresh worker's start, ~100 ms of CPU).
 */
export const RECALL_MS = 1_000;

interface Waiter {
  lane: Lane;
  give(slot: WorkerSlot): void;
}

export class WorkerPool {
  private readonly idle: WorkerSlot[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly all = new Set<WorkerSlot>();
  private closed = false;
  /** Workers terminated and replaced (`replace`), for operators. */
  restarts = 0;

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
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const slot: WorkerSlot = { worker, onMessage: null, use: null, stop };
    worker.onmessage = (event: MessageEvent<FromWorker>) => slot.onMessage?.(event.data);
    worker.postMessage({ type: "open", path: this.dbPath, busyTimeoutMs: this.busyTimeoutMs, stop: stop.buffer as SharedArrayBuffer } satisfies ToWorker);
    // An idle worker must not keep the process alive.
    (worker as Worker & { unref?: () => void }).unref?.();
    this.all.add(slot);
    return slot;
  }

  /** At most this many workers run bulk work, so one is always left for interactive queries. */
  get bulkLimit(): number {
    return Math.max(1, this.size - 1);
  }

  private bulkRunning(): number {
    let count = 0;
    for (const slot of this.all) if (slot.use === "bulk") count++;
    return count;
  }

  private mayStart(lane: Lane): boolean {
    return lane === "interactive" || this.bulkRunning() < this.bulkLimit;
  }

  /**
   * A free worker, or the next one to become free. A request that cannot get one within
   * `waitMs` is turned away (503) rather than queued without bound behind slow queries.
   */
  acquire(waitMs: number, lane: Lane = "interactive"): Promise<WorkerSlot> {
    if (this.closed) return Promise.reject(new Error("worker pool is closed"));
    if (this.idle.length > 0 && this.mayStart(lane)) return Promise.resolve(this.take(this.idle.pop()!, lane));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        lane,
        give: (slot) => {
          clearTimeout(timer);
          resolve(this.take(slot, lane));
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new ServerBusyError(`All ${this.size} query workers stayed busy for ${waitMs} ms: retry shortly`));
      }, waitMs);
      this.waiting.push(waiter);
    });
  }

  release(slot: WorkerSlot): void {
    this.handOver(this.free(slot));
  }

  /**
   * Takes back a worker whose job nobody wants any more (its client went away, or a HEAD needed
   * only the headers) without restarting it: the stop flag ends a guarded WHERE within a row and
   * any other read at its next batch, and the worker answers `stopped` once its read transaction
   * has ended. A fresh worker costs ~100 ms of CPU, which a client opening and dropping exports
   * would otherwise make the server spend again and again for a few bytes. A worker that does not
   * answer within RECALL_MS (still inside SQLite, or waiting for a writer's lock) is replaced.
   */
  recall(slot: WorkerSlot, job: number): void {
    Atomics.store(slot.stop, 0, 1);
    const timer = setTimeout(() => this.all.has(slot) && this.replace(slot), RECALL_MS);
    slot.onMessage = (msg) => {
      if (msg.type !== "stopped" || msg.id !== job) return;
      clearTimeout(timer);
      this.release(slot);
    };
    slot.worker.postMessage({ type: "stop", id: job } satisfies ToWorker);
  }

  /**
   * Terminates a busy worker (time limit, a job that did not stop) and puts a fresh one in its place. The stop
   * flag goes first: termination only takes effect once SQLite returns to JavaScript, which the
   * guarded WHERE makes happen within a row.
   */
  replace(slot: WorkerSlot): void {
    this.retire(slot);
    this.restarts++;
    if (!this.closed) this.handOver(this.spawn());
  }

  private retire(slot: WorkerSlot): void {
    this.free(slot);
    Atomics.store(slot.stop, 0, 1);
    slot.worker.terminate();
    this.all.delete(slot);
  }

  private take(slot: WorkerSlot, use: WorkerSlot["use"]): WorkerSlot {
    slot.use = use;
    return slot;
  }

  private free(slot: WorkerSlot): WorkerSlot {
    slot.onMessage = null;
    slot.use = null;
    return slot;
  }

  /** Interactive waiters first; bulk ones only while the bulk limit allows. */
  private handOver(slot: WorkerSlot): void {
    let index = this.waiting.findIndex((waiter) => waiter.lane === "interactive");
    if (index < 0) index = this.waiting.findIndex((waiter) => this.mayStart(waiter.lane));
    if (index >= 0) this.waiting.splice(index, 1)[0]!.give(slot);
    else this.idle.push(slot);
  }

  close(): void {
    this.closed = true;
    for (const slot of this.all) {
      Atomics.store(slot.stop, 0, 1);
      slot.worker.terminate();
    }
    this.all.clear();
    this.idle.length = 0;
  }
}
