/**
 * `arrow402 validate`: the config, the database, every configured table and column, and every
 * stored value against its column's Arrow type (ARCHITECTURE.md §1, §5), so a value that would fail a
 * query at run time is reported ahead, with its config path and rowid.
 */
import { Database } from "bun:sqlite";
import { fitProblem } from "../arrow/encode.ts";
import type { TableInfo } from "../engines/sqlite/catalog.ts";
import { ConfigError } from "../errors.ts";
import { loadContext, openCatalog, soleSqlitePath } from "./context.ts";

/** Per column, list this many bad values and count the rest. */
const SHOWN_PER_COLUMN = 5;

export function validate(configPath: string | undefined): number {
  const context = loadContext(configPath);
  const { db, catalog } = openCatalog(context.config, "validate");
  db.close();
  // safeIntegers: integers beyond 2^53 are checked exactly, as the encoder sees them.
  const scan = new Database(soleSqlitePath(context.config, "validate").path, { readonly: true, safeIntegers: true });
  const problems: string[] = [];
  let rows = 0;
  catalog.tables.forEach((table, index) => {
    const result = scanTable(scan, table, `tables[${index}]`);
    rows += result.rows;
    problems.push(...result.problems);
  });
  scan.close();
  if (problems.length > 0) throw new ConfigError(problems);
  console.log(
    `${context.source}: OK — ${catalog.tables.length} table(s), ${rows} row(s) scanned, every value fits its column's type`,
  );
  return 0;
}

export function scanTable(db: Database, table: TableInfo, path: string): { rows: number; problems: string[] } {
  const problems: string[] = [];
  const columns = table.columns;
  const quoted = columns.map((c) => `"${c.name.replaceAll('"', '""')}"`).join(", ");
  const rowid = table.hasRowid ? "_rowid_, " : "";
  // Identifiers come from the catalog (sqlite_schema), not from user input.
  const stmt = db.prepare(`SELECT ${rowid}${quoted} FROM "${table.name.replaceAll('"', '""')}"`);
  const bad = new Array<number>(columns.length).fill(0);
  let rows = 0;
  for (const row of stmt.values()) {
    rows++;
    const offset = table.hasRowid ? 1 : 0;
    columns.forEach((column, i) => {
      const problem = fitProblem(column.kind, row[i + offset]);
      if (problem === null) return;
      if (bad[i]!++ < SHOWN_PER_COLUMN) {
        const where = table.hasRowid ? `rowid ${row[0]}` : `row ${rows}`;
        problems.push(
          `${path} (${table.name}).${column.name}: ${where}: ${problem} (declared ${column.declaredType || "no type"}); fix the value or the column's declared type`,
        );
      }
    });
  }
  columns.forEach((column, i) => {
    if (bad[i]! > SHOWN_PER_COLUMN) {
      problems.push(`${path} (${table.name}).${column.name}: ${bad[i]! - SHOWN_PER_COLUMN} more value(s) do not fit`);
    }
  });
  return { rows, problems };
}
