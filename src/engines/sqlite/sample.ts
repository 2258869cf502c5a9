/**
 * A dashboard's sample of a SQLite table or view (TableEngine `sample`, ARCHITECTURE.md §7), read on a
 * read-only connection of its own with exact 64-bit integers (§5), the count and the rows in one read
 * transaction. A table larger than the cap is sampled evenly (even-sample.ts) along the given
 * column (or its rowid), most recent first along a time column.
 */
import type { Database } from "bun:sqlite";
import { fitProblem } from "../../arrow/encode.ts";
import type { ColumnInfo, TableInfo } from "../../catalog.ts";
import { ValueDoesNotFitError } from "../../errors.ts";
import type { TableSample } from "../engine.ts";
import { evenPositions } from "../even-sample.ts";

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

const POSITION = quoteIdentifier("arrow402 position");

/** SQL for the sample; `?1` (when not the whole table) is the JSON array of positions to keep. */
function sampleSql(table: TableInfo, whole: boolean, along: ColumnInfo | undefined): string {
  const from = quoteIdentifier(table.name);
  const columns = table.columns.map((c) => quoteIdentifier(c.name));
  const by = along ? quoteIdentifier(along.name) : table.hasRowid ? "_rowid_" : "";
  const numbered = (select: string) => `SELECT ${select}, row_number() OVER (${by ? `ORDER BY ${by}` : ""}) AS ${POSITION} FROM ${from}`;
  const kept = `${POSITION} IN (SELECT value FROM json_each(?1))`;
  if (!table.hasRowid) {
    // A view: number its rows, keep the chosen positions.
    const order = ` ORDER BY ${POSITION} ${along ? "DESC" : "ASC"}`;
    return whole ? `SELECT ${columns.join(", ")} FROM ${from}${along ? ` ORDER BY ${by} DESC` : ""}` : `SELECT ${columns.join(", ")} FROM (${numbered(columns.join(", "))}) WHERE ${kept}${order}`;
  }
  // The rowid rides along (last) only to name the row of a value that does not fit. Numbering
  // only the rowids, then reading the chosen rows by rowid, sorts far less than numbering whole rows.
  const order = along ? ` ORDER BY ${by} DESC, _rowid_ DESC` : " ORDER BY _rowid_";
  const where = whole ? "" : ` WHERE _rowid_ IN (SELECT r FROM (${numbered("_rowid_ AS r")}) WHERE ${kept})`;
  // Named apart: a column list with a repeated name (the rowid alias) is asking for trouble.
  return `SELECT ${columns.join(", ")}, _rowid_ AS ${quoteIdentifier("arrow402 rowid")} FROM ${from}${where}${order}`;
}

/** `db` is read-only (catalog.ts openReadOnly); the sample's values are checked as the encoder checks them. */
export function sampleSqliteTable(db: Database, table: TableInfo, cap: number, along: string | null): TableSample {
  const by = along === null ? undefined : table.columns.find((c) => c.name === along);
  if (along !== null && by === undefined) throw new Error(`table '${table.name}' has no column '${along}' to sample along`);
  const read = db.transaction(() => {
    const count = db.prepare(`SELECT count(*) FROM ${quoteIdentifier(table.name)}`);
    const total = Number(count.values()[0]?.[0] ?? 0);
    count.finalize();
    const whole = total <= cap;
    const statement = db.prepare(sampleSql(table, whole, by));
    // Exact 64-bit integers, as the query endpoint reads them (ARCHITECTURE.md §5).
    statement.safeIntegers(true);
    const selected = (whole ? statement.values() : statement.values(JSON.stringify(evenPositions(total, cap)))) as unknown[][];
    statement.finalize();
    return { total, selected };
  });
  const { total, selected } = read();
  const rows = table.hasRowid ? selected.map((row) => row.slice(0, -1)) : selected;
  rows.forEach((row, r) => {
    table.columns.forEach((column, c) => {
      const detail = fitProblem(column, row[c], { nullable: column.nullable });
      if (detail === null) return;
      const rowid = table.hasRowid ? (selected[r]!.at(-1) as number | bigint) : null;
      throw new ValueDoesNotFitError(table.name, column.name, rowid, detail);
    });
  });
  return { rows, totalRows: Math.max(total, rows.length), sampled: rows.length < total };
}
