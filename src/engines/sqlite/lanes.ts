/**
 * Which lane of the worker pool a query takes (pool.ts): `bulk` for work that reads a whole large
 * table (a full scan without a small LIMIT: exports, unselective filters, unindexed ORDER BY),
 * `interactive` for everything else (a LIMIT within INTERACTIVE_MAX_ROWS, a plan that searches an
 * index or the rowid, or a scan of a table whose rowid span is within INTERACTIVE_MAX_ROWS). Bulk
 * work never takes the last worker, so a small query is answered promptly however many exports run
 * or stall. Decided once per validated query, from SQLite's own query plan.
 */
import type { Database } from "bun:sqlite";
import type { ValidatedQuery } from "../../sql/dialect.ts";
import { rowidSpanSql } from "./rowid.ts";
import { valuesOnce } from "./catalog.ts";
import type { Lane } from "./pool.ts";

/** A LIMIT (plus OFFSET) up to this bounds the result enough for the interactive lane. */
export const INTERACTIVE_MAX_ROWS = 10_000;

export class LaneClassifier {
  private readonly lanes = new WeakMap<ValidatedQuery, Lane>();

  /** `db`: a read-only connection that never waits for a writer (busy_timeout 0). */
  constructor(private readonly db: Database) {}

  laneOf(query: ValidatedQuery): Lane {
    const known = this.lanes.get(query);
    if (known !== undefined) return known;
    if (query.limit !== null && query.limit + (query.offset ?? 0) <= INTERACTIVE_MAX_ROWS) return this.remember(query, "interactive");
    let details: string[];
    try {
      details = valuesOnce(this.db, `EXPLAIN QUERY PLAN ${query.sql}`).map((step) => String(step[3] ?? ""));
    } catch {
      return "bulk"; // a writer holds the file: assume the worst, decide again next time
    }
    if (!details.some((detail) => detail.startsWith("SCAN "))) return this.remember(query, "interactive");
    return this.remember(query, this.smallTable(query) ? "interactive" : "bulk");
  }

  /** Whether the table's rowid span (two b-tree lookups) proves it small; false for views. */
  private smallTable(query: ValidatedQuery): boolean {
    const sql = rowidSpanSql(query);
    if (sql === null) return false;
    try {
      const span = valuesOnce(this.db, sql)[0]?.[0];
      return span === null || (span !== undefined && Number(span) <= INTERACTIVE_MAX_ROWS);
    } catch {
      return false;
    }
  }

  private remember(query: ValidatedQuery, lane: Lane): Lane {
    this.lanes.set(query, lane);
    return lane;
  }
}
