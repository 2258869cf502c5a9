/**
 * Which scans are read by two workers in rowid ranges (striped.ts), decided on the HTTP thread: a
 * plain scan of a rowid table in rowid order (no index, no ORDER BY or LIMIT), not on a WAL file,
 * with few enough columns, and rows narrow enough by a sample of their width.
 */
import type { Database } from "bun:sqlite";
import type { ValidatedQuery } from "../../sql/dialect.ts";
import { rowidBoundsSql, rowidRangeSql, rowWidthSql } from "./rowid.ts";
import { valuesOnce } from "./catalog.ts";
import { BATCH_MAX_CELLS } from "./protocol.ts";

/** Rowids per range: each range is at most one batch of BATCH_ROWS rows. */
export const RANGE_ROWIDS = 4_096;

/**
 * A range is read and encoded whole before it is sent when its rows hold up to BATCH_MAX_BYTES of
 * text and blobs; a wider one is sent in parts of that size (worker.ts `runRange`), held back
 * like a one-worker query's batches. A table whose rows (the query's text and blob columns, in
 * WIDTH_SAMPLES rows spread over the table) hold more than RANGE_MAX_BYTES / RANGE_ROWIDS (4 KiB)
 * is not split at all: its one worker streams it. The parts are for the rows the samples miss.
 */
const RANGE_MAX_BYTES = 16 * 1024 * 1024;
const WIDTH_SAMPLES = 16;

export interface StripePlan {
  boundsSql: string;
  rangeSql: string;
  /** A row's bytes of text and blobs at or after a rowid (engines/sqlite/rowid.ts `rowWidthSql`); null: none read. */
  widthSql: string | null;
  rangeWithRowid: () => string | null;
}

/** Which queries are read by ranges: decided once per validated query, and per call for WAL. */
export class StripePlanner {
  private readonly plans = new WeakMap<ValidatedQuery, StripePlan | null>();

  constructor(private readonly db: Database) {}

  plan(query: ValidatedQuery): StripePlan | null {
    try {
      let plan = this.plans.get(query);
      if (plan === undefined) {
        plan = planFor(query, this.db);
        this.plans.set(query, plan);
      }
      // The journal mode may change while the server runs; one pragma per large scan.
      if (plan === null || valuesOnce(this.db, "PRAGMA journal_mode")[0]?.[0] === "wal") return null;
      return this.narrow(query, plan) ? plan : null;
    } catch {
      // A writer holds the file (SQLITE_BUSY), or the query fails: one worker runs it, waiting
      // for the writer or reporting the error. This thread never waits.
      return null;
    }
  }

  /** Whether a range of the table's rows fits RANGE_MAX_BYTES, from rows sampled over its rowid span (the data may have changed since the plan). */
  private narrow(query: ValidatedQuery, plan: StripePlan): boolean {
    // A range is one batch: more columns than BATCH_MAX_CELLS allows for RANGE_ROWIDS rows, one worker.
    if (query.columns.length * RANGE_ROWIDS > BATCH_MAX_CELLS) return false;
    if (plan.widthSql === null) return true;
    const [min, max] = (this.db.query(plan.boundsSql).values()[0] ?? [null, null]) as [number | null, number | null];
    if (min === null || max === null) return true;
    const width = this.db.query(plan.widthSql);
    for (let i = 0; i < WIDTH_SAMPLES; i++) {
      const bytes = Number(width.values(min + Math.floor(((max - min) * i) / WIDTH_SAMPLES))[0]?.[0] ?? 0);
      if (bytes * RANGE_ROWIDS > RANGE_MAX_BYTES) return false;
    }
    return true;
  }

  close(): void {
    this.db.close();
  }
}

function planFor(query: ValidatedQuery, db: Database): StripePlan | null {
  const range = rowidRangeSql(query);
  const boundsSql = rowidBoundsSql(query);
  if (range === null || boundsSql === null) return null;
  // Only a plain table scan returns rows in rowid order; an index (covering, or one the WHERE
  // searches) gives another order and reads fewer rows.
  const steps = valuesOnce(db, `EXPLAIN QUERY PLAN ${query.sql}`);
  const detail = String(steps[0]?.[3] ?? "");
  if (steps.length !== 1 || !detail.startsWith("SCAN ") || detail.includes(" USING ")) return null;
  return { boundsSql, rangeSql: range.range, rangeWithRowid: range.rangeWithRowid, widthSql: rowWidthSql(query) };
}
