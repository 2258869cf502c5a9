/**
 * `arrow402 validate` (ARCHITECTURE.md §1, §5; DESIGN.md §14): the config, every source (each must
 * answer), every configured table and column, and every stored value read through its table's
 * engine as queries read it (TableEngine `scan`), so that a value that would fail a query at run
 * time is reported ahead, with its config path, its column and its row. Every problem is reported
 * at once; any problem exits 2, as an invalid config does.
 */
import type { TableInfo } from "../catalog.ts";
import type { TableEngine } from "../engines/engine.ts";
import { ConfigError } from "../errors.ts";
import { closeSources, loadContext, openSources, sourcePath } from "./context.ts";

/** Per column, list this many bad values and count the rest. */
const SHOWN_PER_COLUMN = 5;

export async function validate(configPath: string | undefined): Promise<number> {
  const context = loadContext(configPath);
  const { config } = context;
  const engines = openSources(config);
  const problems: string[] = [];
  let tables = 0;
  let rows = 0;
  try {
    for (const [name, engine] of engines) {
      // An unreachable source is one problem naming it (never its URL: it may hold a password), not one per table.
      const answered = await engine.ping().then(
        () => true,
        (error: unknown) => {
          problems.push(`${sourcePath(name, config.databases[name]!)}: ${(error as Error).message}`);
          return false;
        },
      );
      if (!answered) continue;
      const configured = config.tables.map((table, index) => ({ config: table, index })).filter(({ config: table }) => table.database === name);
      if (configured.length === 0) continue;
      const described = await engine.describe(configured);
      problems.push(...described.problems);
      for (const table of described.tables) {
        const index = config.tables.indexOf(table.config);
        const scanned = await scanTable(engine, table, `tables[${index}]`);
        tables++;
        rows += scanned.rows;
        problems.push(...scanned.problems);
      }
    }
  } finally {
    closeSources(engines);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  console.log(`${context.source}: OK — ${tables} table(s), ${rows} row(s) scanned, every value fits its column's type`);
  return 0;
}

/** The table's misfits as problems: SHOWN_PER_COLUMN per column, then how many more. */
async function scanTable(engine: TableEngine, table: TableInfo, path: string): Promise<{ rows: number; problems: string[] }> {
  const problems: string[] = [];
  const bad = new Array<number>(table.columns.length).fill(0);
  let rows = 0;
  try {
    ({ rows } = await engine.scan(table, ({ column: index, row, detail }) => {
      const column = table.columns[index]!;
      if (bad[index]!++ < SHOWN_PER_COLUMN) {
        problems.push(`${path} (${table.name}).${column.name}: ${row}: ${detail} (declared ${column.declaredType || "no type"}); fix the value or the column's declared type`);
      }
    }));
  } catch (error) {
    problems.push(`${path} (${table.name}): could not be read to the end: ${(error as Error).message}`);
  }
  table.columns.forEach((column, i) => {
    if (bad[i]! > SHOWN_PER_COLUMN) problems.push(`${path} (${table.name}).${column.name}: ${bad[i]! - SHOWN_PER_COLUMN} more value(s) do not fit`);
  });
  return { rows, problems };
}
