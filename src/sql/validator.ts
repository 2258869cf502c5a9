/**
 * Query validation as the HTTP thread sees it (ARCHITECTURE.md §4 "Validation is bounded"): a text
 * validated before is answered from the cache at once, without a worker (small repeated queries
 * are the hot path); any other text gets the linear checks of precheck.ts here, then is parsed and
 * validated by a validation worker under a deadline (validation-pool.ts), whose plain result is
 * re-linked to the catalog's own objects. The HTTP thread itself never parses.
 */
import type { Catalog } from "../catalog.ts";
import { LIMITS } from "./allowlist.ts";
import { LruCache } from "./cache.ts";
import type { ValidatedQuery } from "./validated.ts";
import { fromPlain, tableShapes } from "./plain-query.ts";
import { precheckQuery } from "./precheck.ts";
import { ValidationPool } from "./validation-pool.ts";

export interface QueryValidator {
  /** The validated query, or a rejection with a BadRequestError (400) or ServerBusyError (503). */
  validate(sql: string): Promise<ValidatedQuery>;
  /**
   * A validator for another catalog of the same tables and columns (a reload that changed prices
   * or descriptions): the same workers, a cache of its own (cached queries name their catalog's
   * objects). Null when the tables or the query size limit differ: then a new validator is needed.
   */
  forCatalog(catalog: Catalog, limits: { maxQueryBytes: number }): QueryValidator | null;
  /** Resolves once its workers can take texts (validation-pool.ts `ready`). */
  readonly ready: Promise<void>;
  /** Closes this validator; the workers stop when the last validator sharing them is closed. */
  close(): void;
}

export interface ValidatorOptions {
  /** Validation workers (default 2: a validation takes milliseconds; more only adds memory). */
  workers?: number;
  /** Deadline of one validation once a worker has it (default LIMITS.validationTimeoutMs). */
  timeoutMs?: number;
  /** How long a text may wait for a free worker before it is turned away (default twice the deadline). */
  maxWaitMs?: number;
  /** Texts waiting at most; more are turned away at once. */
  maxWaiting?: number;
  /** Validated texts kept. */
  cacheSize?: number;
}

export function createQueryValidator(catalog: Catalog, limits: { maxQueryBytes: number }, options: ValidatorOptions = {}): QueryValidator {
  const timeoutMs = options.timeoutMs ?? LIMITS.validationTimeoutMs;
  const shapes = tableShapes(catalog);
  const pool = new ValidationPool(shapes, limits.maxQueryBytes, {
    workers: options.workers ?? 2,
    timeoutMs,
    maxWaitMs: options.maxWaitMs ?? 2 * timeoutMs,
    maxWaiting: options.maxWaiting ?? 256,
  });
  const shared = { pool, shapes: JSON.stringify(shapes), users: 0, limits, cacheSize: options.cacheSize ?? 1024 };
  return validatorOver(shared, catalog);
}

interface SharedPool {
  pool: ValidationPool;
  /** The table shapes the workers validate against, as JSON. */
  shapes: string;
  users: number;
  limits: { maxQueryBytes: number };
  cacheSize: number;
}

function validatorOver(shared: SharedPool, catalog: Catalog): QueryValidator {
  shared.users++;
  const cache = new LruCache<string, ValidatedQuery>(shared.cacheSize);
  const pending = new Map<string, Promise<ValidatedQuery>>();
  let closed = false;

  const validateNew = async (sql: string): Promise<ValidatedQuery> => {
    precheckQuery(sql, shared.limits.maxQueryBytes);
    const query = fromPlain(await shared.pool.validate(sql), catalog);
    // Refusals are not cached: they throw before reaching here.
    cache.set(sql, query);
    return query;
  };

  return {
    ready: shared.pool.ready,
    async validate(sql) {
      const hit = cache.get(sql);
      if (hit !== undefined) return hit;
      // Several requests for one new text share its validation.
      let validation = pending.get(sql);
      if (!validation) {
        validation = validateNew(sql).finally(() => pending.delete(sql));
        pending.set(sql, validation);
      }
      return validation;
    },
    forCatalog(next, limits) {
      const same = !closed && limits.maxQueryBytes === shared.limits.maxQueryBytes && JSON.stringify(tableShapes(next)) === shared.shapes;
      return same ? validatorOver(shared, next) : null;
    },
    close() {
      if (closed) return;
      closed = true;
      if (--shared.users === 0) shared.pool.close();
    },
  };
}
