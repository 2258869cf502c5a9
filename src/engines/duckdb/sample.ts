/**
 * A DuckDB table read for the operator's commands (TableEngine `sample` and `scan`), through the
 * same read as every query (read.ts), so the values are exactly those a query returns.
 * - sample: one statement counts the rows and numbers them along the time column (NULL times first,
 *   as in SQLite), keeping even-sample.ts's positions (round(i·(n−1)/(cap−1)) + 1, in integers:
 *   (2·i·(n−1) + (cap−1)) // (2·(cap−1))), most recent first; the count rides along as a last column.
 * - scan: every row, without a time limit; each refused value is reported with its row's position.
 */
import type { DuckDBInstance } from "@duckdb/node-api";
import type { StoredMisfit, TableSample } from "../engine.ts";
import type { DuckColumn } from "./catalog.ts";
import { quoteName } from "./database.ts";
import { openDuckRead } from "./read.ts";
import { selectExpression } from "./types.ts";

const POSITION = quoteName("arrow402 position");
const TOTAL = quoteName("arrow402 total");

export interface DuckRelation {
  /** The relation's SQL (database.ts relationSql). */
  sql: string;
  columns: DuckColumn[];
}

function keptPositions(cap: number): string {
  if (cap >= 2) return `${POSITION} IN (SELECT (2 * i * (n - 1) + ${cap - 1}) // ${2 * (cap - 1)} + 1 FROM total, range(0, ${cap}) AS r(i))`;
  return cap === 1 ? `${POSITION} = (SELECT n FROM total)` : "false";
}

export function sampleSql(relation: DuckRelation, cap: number, along: DuckColumn | undefined): string {
  const kept = Math.max(0, Math.floor(cap));
  const names = relation.columns.map((column) => quoteName(column.name));
  const order = along === undefined ? "" : `ORDER BY ${quoteName(along.name)} ASC NULLS FIRST`;
  return (
    `WITH total AS (SELECT count(*) AS n FROM ${relation.sql}) ` +
    `SELECT ${relation.columns.map((column) => selectExpression(column.name, column)).join(", ")}, (SELECT n FROM total) AS ${TOTAL} ` +
    `FROM (SELECT ${names.join(", ")}, row_number() OVER (${order}) AS ${POSITION} FROM ${relation.sql}) AS numbered ` +
    `WHERE (SELECT n FROM total) <= ${kept} OR ${keptPositions(kept)} ` +
    `ORDER BY ${POSITION} ${along === undefined ? "ASC" : "DESC"}`
  );
}

export async function sampleDuckTable(instance: DuckDBInstance, relation: DuckRelation, cap: number, along: string | null, timeoutMs: number): Promise<TableSample> {
  const by = along === null ? undefined : relation.columns.find((column) => column.name === along);
  if (along !== null && by === undefined) throw new Error(`${relation.sql} has no column '${along}' to sample along`);
  const types = [...relation.columns.map((column) => column.type), { kind: "int64" as const }];
  const read = await openDuckRead(instance, { select: sampleSql(relation, cap, by), types, count: null, timeoutMs });
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

export async function scanDuckTable(instance: DuckDBInstance, relation: DuckRelation, misfit: (found: StoredMisfit) => void): Promise<{ rows: number }> {
  const read = await openDuckRead(instance, {
    select: `SELECT ${relation.columns.map((column) => selectExpression(column.name, column)).join(", ")} FROM ${relation.sql}`,
    types: relation.columns.map((column) => column.type),
    count: null,
    timeoutMs: Number.POSITIVE_INFINITY,
    misfit: (refused) => misfit({ column: refused.columnIndex, row: `row ${refused.rowIndex + 1}`, detail: refused.detail }),
  });
  let rows = 0;
  for await (const batch of read.batches) rows += batch.rows.length;
  return { rows };
}
