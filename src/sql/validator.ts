/**
 * Query validation as the HTTP thread sees it (DESIGN.md §4 "Validation is bounded"): a text
 * validated before is answered from the cache at once, without a worker (small repeated queries
 * are the hot path); any other text gets the linear checks of precheck.ts here, then is parsed and
 * validated by a validation worker under a deadline (validation-pool.ts), and the worker's plain
 * result is re-linked to the catalog's own objects. The HTTP thread itself never parses.
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
  const pool = new ValidationPool(tableShapes(catalog), limits.maxQueryBytes, {
    workers: options.workers ?? 2,
    timeoutMs,
    maxWaitMs: options.maxWaitMs ?? 2 * timeoutMs,
    maxWaiting: options.maxWaiting ?? 256,
  });
  const cache = new LruCache<string, ValidatedQuery>(options.cacheSize ?? 1024);
  const pending = new Map<string, Promise<ValidatedQuery>>();

  const validateNew = async (sql: string): Promise<ValidatedQuery> => {
    precheckQuery(sql, limits.maxQueryBytes);
    const query = fromPlain(await pool.validate(sql), catalog);
    // Refusals are not cached: they throw before reaching here.
    cache.set(sql, query);
    return query;
  };

  return {
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
    close: () => pool.close(),
  };
}
