/**
 * A PostgreSQL table read for the operator's commands rather than for a buyer (TableEngine `sample`
 * and `scan`): SQL of our own, read through the same path as every query (read.ts openPgRead: one
 * REPEATABLE READ READ ONLY transaction, `COPY … (FORMAT binary)` decoded by copy-binary.ts), so
 * the values are exactly those a query returns and what a query would refuse is refused here too.
 *
 * - sample: a dashboard's snapshot (ARCHITECTURE.md §7). One statement counts the rows and numbers
 *   them along the time column (row_number(), NULL times first as in SQLite), keeping the positions
 *   of even-sample.ts (the same arithmetic: round(i·(n−1)/(cap−1)) + 1, exact in numeric), most
 *   recent first; the count rides along as a last column, so both come from one snapshot. Bounded
 *   by the query time limit.
 * - scan: `arrow402 validate` reads every row, without a time limit, and hears of every value the
 *   decoder refuses (±infinity, NaN in a decimal, a timestamp past int64 µs…), naming its row by
 *   position and, in a plain table or materialized view, by its ctid (`WHERE ctid = '(0,3)'`).
 */
import type { SQL } from "bun";
import type { StoredMisfit, TableSample } from "../engine.ts";
import type { PgColumn, PgRelationKind } from "./catalog.ts";
import { openPgRead } from "./read.ts";
import { quoteIdent, selectExpression, type DecodeColumn } from "./types.ts";
import type { PgValueRefused } from "./value-refusal.ts";

/** A described table: where it is, what it is, and its columns as PostgreSQL has them. */
export interface PgRelation {
  schema: string;
  name: string;
  kind: PgRelationKind;
  columns: PgColumn[];
  /** Its integer key (catalog.ts), when it has one. */
  key?: string | null;
}

const POSITION = quoteIdent("arrow402 position");
const TOTAL: DecodeColumn = { name: "arrow402 total", type: { kind: "int64" }, wire: "int8" };
const CTID: DecodeColumn = { name: "arrow402 ctid", type: { kind: "utf8" }, wire: "text" };

function relationName(relation: PgRelation): string {
  return `${quoteIdent(relation.schema)}.${quoteIdent(relation.name)}`;
}

/** The positions kept out of n: all of them when n ≤ cap, else even-sample.ts's, computed in SQL. */
function keptPositions(cap: number): string {
  if (cap >= 2) return `${POSITION} IN (SELECT round(i::numeric * (n - 1) / ${cap - 1})::int8 + 1 FROM total, generate_series(0, ${cap - 1}) AS i)`;
  return cap === 1 ? `${POSITION} = (SELECT n FROM total)` : "false";
}

/** The sample's SELECT: the columns as a query reads them (types.ts selectExpression), then the table's row count. */
export function sampleSql(relation: PgRelation, cap: number, along: PgColumn | undefined): string {
  const kept = Math.max(0, Math.floor(cap));
  const columns = relation.columns.map((column) => quoteIdent(column.name));
  const order = along === undefined ? "" : `ORDER BY ${quoteIdent(along.name)} ASC NULLS FIRST`;
  return (
    `WITH total AS (SELECT count(*) AS n FROM ${relationName(relation)}) ` +
    `SELECT ${relation.columns.map((column) => selectExpression(column, "numbered")).join(", ")}, (SELECT n FROM total) AS ${quoteIdent(TOTAL.name)} ` +
    `FROM (SELECT ${columns.join(", ")}, row_number() OVER (${order}) AS ${POSITION} FROM ${relationName(relation)}) AS numbered ` +
    `WHERE (SELECT n FROM total) <= ${kept} OR ${keptPositions(kept)} ` +
    `ORDER BY ${POSITION} ${along === undefined ? "ASC" : "DESC"}`
  );
}

export async function samplePgTable(sql: SQL, relation: PgRelation, cap: number, along: string | null, timeoutMs: number): Promise<TableSample> {
  const by = along === null ? undefined : relation.columns.find((column) => column.name === along);
  if (along !== null && by === undefined) throw new Error(`${relationName(relation)} has no column '${along}' to sample along`);
  const read = await openPgRead(sql, { select: sampleSql(relation, cap, by), columns: [...relation.columns, TOTAL], timeoutMs });
  const rows: unknown[][] = [];
  let total = 0;
  for await (const batch of read.batches) {
    for (const row of batch.rows) {
      total = Number(row.pop() as bigint);
      rows.push(row);
    }
  }
  return { rows, totalRows: Math.max(total, rows.length), sampled: rows.length < total };
}

/** Every row of the table through the decoder; `misfit` hears of each value it refuses. */
export async function scanPgTable(sql: SQL, relation: PgRelation, misfit: (found: StoredMisfit) => void): Promise<{ rows: number }> {
  // A ctid names a row of a plain table or materialized view; a view's rows and a partitioned table's (one ctid per partition) have none of their own.
  const withCtid = relation.kind === "table" || relation.kind === "materialized view";
  const select = relation.columns.map((column) => selectExpression(column));
  if (withCtid) select.push(`ctid::text AS ${quoteIdent(CTID.name)}`);
  /** Refused values whose row has not come out of the decoder yet (its ctid is read after them). */
  let pending: PgValueRefused[] = [];
  const read = await openPgRead(sql, {
    select: `SELECT ${select.join(", ")} FROM ${relationName(relation)}`,
    columns: withCtid ? [...relation.columns, CTID] : relation.columns,
    timeoutMs: Number.POSITIVE_INFINITY,
    onRefused: (refused) => void pending.push(refused),
  });
  const ctid = relation.columns.length;
  const report = (refused: PgValueRefused, row: readonly unknown[] | undefined) => {
    const where = withCtid && typeof row?.[ctid] === "string" ? ` (ctid '${row[ctid]}')` : "";
    misfit({ column: refused.columnIndex, row: `row ${refused.rowIndex + 1}${where}`, detail: refused.detail });
  };
  let rows = 0;
  for await (const batch of read.batches) {
    rows += batch.rows.length;
    const end = batch.firstRowIndex + batch.rows.length;
    const later: PgValueRefused[] = [];
    for (const refused of pending) {
      if (refused.rowIndex < end) report(refused, batch.rows[refused.rowIndex - batch.firstRowIndex]);
      else later.push(refused);
    }
    pending = later;
  }
  for (const refused of pending) report(refused, undefined);
  return { rows };
}
