/**
 * A few validation workers (validation-worker.ts) with a deadline and bounded waiting (ARCHITECTURE.md
 * §4 "Validation is bounded"). sql-parser-cst cannot be interrupted, so a validation still running
 * at its deadline is refused (400) and its worker terminated and replaced; a text that cannot get
 * a worker within the wait limit, or finds the waiting line full, is turned away (503).
 */
import { BadRequestError, ServerBusyError, ServerError } from "../errors.ts";
import type { FromValidator, PlainQuery, TableShape, ToValidator } from "./plain-query.ts";

/** In the compiled executable the worker is an extra entrypoint (see `bun run build`), as in engines/sqlite/pool.ts. */
const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? "./sql/validation-worker.ts"
  : new URL("./validation-worker.ts", import.meta.url).href;

export interface PoolOptions {
  workers: number;
  /** Deadline of one validation once a worker has it. */
  timeoutMs: number;
  /** How long a text may wait for a free worker. */
  maxWaitMs: number;
  /** Texts waiting at most; more are turned away at once. */
  maxWaiting: number;
}

/** Bun's Worker: ref() and unref() decide whether it keeps the process alive. */
type BunWorker = Worker & { ref(): void; unref(): void };

interface Job {
  id: number;
  sql: string;
  resolve(validated: PlainQuery): void;
  reject(error: Error): void;
  waitTimer?: ReturnType<typeof setTimeout>;
}

interface Slot {
  worker: BunWorker;
  /** The worker has loaded the parser and the tables. */
  ready: boolean;
  /** One of the pool's first workers, not yet ready (`ValidationPool.ready`). */
  first: boolean;
  job: Job | null;
  deadline?: ReturnType<typeof setTimeout>;
}

const failed = () => new ServerError("SQL validation failed unexpectedly: retry the request");
const stopped = () => new ServerError("SQL validation has stopped: the server is shutting down");

export class ValidationPool {
  /**
   * Resolves once every first worker is ready (or has failed): a server answers queries only then,
   * so its first queries do not wait out a loaded machine's worker start-up (seconds) and get 503.
   */
  readonly ready: Promise<void>;
  private starting = 0;
  private started: () => void = () => {};
  private readonly init: ToValidator;
  private readonly slots = new Set<Slot>();
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    tables: TableShape[],
    maxQueryBytes: number,
    private readonly options: PoolOptions,
  ) {
    this.init = { type: "init", tables, maxQueryBytes };
    this.ready = new Promise((resolve) => (this.started = resolve));
    this.starting = options.workers;
    for (let i = 0; i < options.workers; i++) this.spawn(true);
    if (this.starting === 0) this.started();
  }

  /** A first worker is ready or gone. */
  private firstDone(): void {
    if (--this.starting === 0) this.started();
  }

  validate(sql: string): Promise<PlainQuery> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(stopped());
      const job: Job = { id: this.nextId++, sql, resolve, reject };
      const idle = [...this.slots].find((slot) => slot.ready && slot.job === null);
      if (idle) return this.start(idle, job);
      if (this.waiting.length >= this.options.maxWaiting) return reject(this.busy());
      job.waitTimer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(job), 1);
        reject(this.busy());
      }, this.options.maxWaitMs);
      this.waiting.push(job);
    });
  }

  close(): void {
    this.closed = true;
    for (const job of this.waiting.splice(0)) {
      clearTimeout(job.waitTimer);
      job.reject(stopped());
    }
    for (const slot of this.slots) {
      slot.job?.reject(stopped());
      this.retire(slot);
    }
  }

  private busy(): ServerBusyError {
    return new ServerBusyError(`All ${this.options.workers} SQL validators stayed busy for ${this.options.maxWaitMs} ms: retry shortly`);
  }

  private spawn(first = false): void {
    const worker = new Worker(WORKER_URL) as BunWorker;
    const slot: Slot = { worker, ready: false, job: null, first };
    worker.onmessage = (event: MessageEvent<FromValidator>) => this.onMessage(slot, event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      console.error("arrow402: SQL validation worker failed:", event.message);
      slot.job?.reject(failed());
      // A worker that fails before it is ready would fail again: texts are turned away instead.
      if (slot.ready) this.replace(slot);
      else this.retire(slot);
      if (slot.first) {
        slot.first = false;
        this.firstDone();
      }
    };
    worker.postMessage(this.init);
    // An idle worker must not keep the process alive (a busy one is ref'd while it works).
    worker.unref();
    this.slots.add(slot);
  }

  private onMessage(slot: Slot, message: FromValidator): void {
    if (message.type === "ready") {
      slot.ready = true;
      if (slot.first) {
        slot.first = false;
        this.firstDone();
      }
      return this.next(slot);
    }
    const job = slot.job;
    // A result that arrives after its deadline belongs to a job already refused.
    if (!job || job.id !== message.id) return;
    clearTimeout(slot.deadline);
    slot.job = null;
    slot.worker.unref();
    if (message.type === "valid") {
      job.resolve(message.query);
    } else if (message.refused) {
      job.reject(new BadRequestError(message.message));
    } else {
      console.error("arrow402: SQL validation failed:", message.message);
      job.reject(failed());
    }
    this.next(slot);
  }

  /** Gives the slot the longest-waiting text, if any. */
  private next(slot: Slot): void {
    const job = this.waiting.shift();
    if (!job) return;
    clearTimeout(job.waitTimer);
    this.start(slot, job);
  }

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref();
    slot.deadline = setTimeout(() => {
      job.reject(
        new BadRequestError(
          `Query is too complex to validate within ${this.options.timeoutMs} ms: simplify it (fewer nested parentheses, function calls and LIKE patterns)`,
        ),
      );
      this.replace(slot);
    }, this.options.timeoutMs);
    slot.worker.postMessage({ type: "validate", id: job.id, sql: job.sql } satisfies ToValidator);
  }

  private retire(slot: Slot): void {
    clearTimeout(slot.deadline);
    slot.job = null;
    slot.worker.terminate();
    this.slots.delete(slot);
  }

  /** Terminates a worker (it overran its deadline, or crashed) and starts a fresh one in its place. */
  private replace(slot: Slot): void {
    this.retire(slot);
    if (!this.closed) this.spawn();
  }
}
