/**
 * Query validation as the HTTP thread sees it (DESIGN.md §4 "Validation is bounded"): a text
 * validated before is answered from the cache at once; any other text gets the linear checks of
 * precheck.ts here, then is parsed and validated by one of a few validation workers, under a
 * deadline. A validation still running at its deadline is refused (400) and its worker terminated
 * and replaced; a text that cannot get a worker within the wait limit is turned away (503). The
 * HTTP thread itself never parses.
 */
import type { Catalog } from "../db/catalog.ts";
import { BadRequestError, ServerBusyError, ServerError } from "../errors.ts";
import { LIMITS } from "./allowlist.ts";
import { LruCache } from "./cache.ts";
import type { ValidatedQuery } from "./dialect.ts";
import { fromPlain, tableShapes, type FromValidator, type ToValidator } from "./plain-query.ts";
import { precheckQuery } from "./precheck.ts";

/** In the compiled executable the worker is an extra entrypoint (see `bun run build`), as in db/pool.ts. */
const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? "./sql/validation-worker.ts"
  : new URL("./validation-worker.ts", import.meta.url).href;

export interface QueryValidator {
  /** The validated query, or a rejection with a BadRequestError (400) or ServerBusyError (503). */
  validate(sql: string): Promise<ValidatedQuery>;
  close(): void;
}

export interface ValidatorOptions {
  /** Validation workers (default 2: parsing takes milliseconds; more only adds memory). */
  workers?: number;
  /** Deadline of one validation once a worker has it. */
  timeoutMs?: number;
  /** How long a text may wait for a free worker before it is turned away. */
  maxWaitMs?: number;
  /** Texts waiting at most; more are turned away at once. */
  maxWaiting?: number;
  /** Validated texts kept. */
  cacheSize?: number;
}

interface Job {
  id: number;
  sql: string;
  resolve(query: ValidatedQuery): void;
  reject(error: Error): void;
  waitTimer?: ReturnType<typeof setTimeout>;
}

/** Bun's Worker: ref() and unref() decide whether it keeps the process alive. */
type BunWorker = Worker & { ref(): void; unref(): void };

interface Slot {
  worker: BunWorker;
  ready: boolean;
  job: Job | null;
  deadline?: ReturnType<typeof setTimeout>;
}

export function createQueryValidator(catalog: Catalog, limits: { maxQueryBytes: number }, options: ValidatorOptions = {}): QueryValidator {
  const size = options.workers ?? 2;
  const timeoutMs = options.timeoutMs ?? LIMITS.validationTimeoutMs;
  const maxWaitMs = options.maxWaitMs ?? 2 * timeoutMs;
  const maxWaiting = options.maxWaiting ?? 256;
  const cache = new LruCache<string, ValidatedQuery>(options.cacheSize ?? 1024);
  const pending = new Map<string, Promise<ValidatedQuery>>();
  const init: ToValidator = { type: "init", tables: tableShapes(catalog), maxQueryBytes: limits.maxQueryBytes };
  const slots = new Set<Slot>();
  const waiting: Job[] = [];
  let nextId = 1;
  let closed = false;

  const spawn = () => {
    const worker = new Worker(WORKER_URL) as BunWorker;
    const slot: Slot = { worker, ready: false, job: null };
    worker.onmessage = (event: MessageEvent<FromValidator>) => onMessage(slot, event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      console.error("arrow402: SQL validation worker failed:", event.message);
      slot.job?.reject(new ServerError("SQL validation failed unexpectedly: retry the request"));
      // A worker that fails before it is ready would fail again: waiting texts are turned away instead.
      if (slot.ready) replace(slot);
      else retire(slot);
    };
    worker.postMessage(init);
    // An idle worker must not keep the process alive (a busy one is ref'd while it works).
    worker.unref();
    slots.add(slot);
  };

  const onMessage = (slot: Slot, message: FromValidator) => {
    if (message.type === "ready") {
      slot.ready = true;
      return next(slot);
    }
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    clearTimeout(slot.deadline);
    slot.job = null;
    slot.worker.unref();
    if (message.type === "valid") job.resolve(fromPlain(message.query, catalog));
    else if (message.refused) job.reject(new BadRequestError(message.message));
    else {
      console.error("arrow402: SQL validation failed:", message.message);
      job.reject(new ServerError("SQL validation failed unexpectedly: retry the request"));
    }
    next(slot);
  };

  /** Gives the slot the longest-waiting text, if any. */
  const next = (slot: Slot) => {
    const job = waiting.shift();
    if (!job) return;
    clearTimeout(job.waitTimer);
    start(slot, job);
  };

  const start = (slot: Slot, job: Job) => {
    slot.job = job;
    slot.worker.ref();
    slot.deadline = setTimeout(() => {
      job.reject(
        new BadRequestError(
          `Query is too complex to validate within ${timeoutMs} ms: simplify it (fewer nested parentheses, function calls and LIKE patterns)`,
        ),
      );
      replace(slot);
    }, timeoutMs);
    slot.worker.postMessage({ type: "validate", id: job.id, sql: job.sql } satisfies ToValidator);
  };

  const retire = (slot: Slot) => {
    clearTimeout(slot.deadline);
    slot.job = null;
    slot.worker.terminate();
    slots.delete(slot);
  };

  /** Terminates a worker (overran its deadline, or crashed) and starts a fresh one in its place. */
  const replace = (slot: Slot) => {
    retire(slot);
    if (!closed) spawn();
  };

  const dispatch = (sql: string): Promise<ValidatedQuery> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new ServerError("SQL validation has stopped: the server is shutting down"));
      const job: Job = { id: nextId++, sql, resolve, reject };
      const idle = [...slots].find((slot) => slot.ready && slot.job === null);
      if (idle) return start(idle, job);
      if (waiting.length >= maxWaiting) return reject(busy());
      job.waitTimer = setTimeout(() => {
        waiting.splice(waiting.indexOf(job), 1);
        reject(busy());
      }, maxWaitMs);
      waiting.push(job);
    });

  const busy = () => new ServerBusyError(`All ${size} SQL validators stayed busy for ${maxWaitMs} ms: retry shortly`);

  for (let i = 0; i < size; i++) spawn();

  return {
    async validate(sql) {
      const hit = cache.get(sql);
      if (hit !== undefined) return hit;
      // Several requests for one new text share its validation.
      const inFlight = pending.get(sql);
      if (inFlight) return inFlight;
      precheckQuery(sql, limits.maxQueryBytes);
      const validation = dispatch(sql);
      pending.set(sql, validation);
      try {
        const query = await validation;
        cache.set(sql, query);
        return query;
      } finally {
        pending.delete(sql);
      }
    },
    close() {
      closed = true;
      const stopped = new ServerError("SQL validation has stopped: the server is shutting down");
      for (const job of waiting.splice(0)) {
        clearTimeout(job.waitTimer);
        job.reject(stopped);
      }
      for (const slot of slots) {
        clearTimeout(slot.deadline);
        slot.job?.reject(stopped);
        slot.worker.terminate();
      }
      slots.clear();
    },
  };
}
