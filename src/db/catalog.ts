/**
 * The catalog: the configured tables and views, their columns, declared types and nullability,
 * read once at start-up from a read-only connection. SQL validation and Arrow encoding both
 * work from it, so the schema of a result is known before the query runs.
 */
import { Database } from "bun:sqlite";
import { arrowKindFor } from "../arrow/types.ts";
import type { Catalog, ColumnInfo, TableInfo } from "../catalog.ts";
import type { TableConfig } from "../config/types.ts";
import { projectedTable } from "../sql/view-shape.ts";

export type { Catalog, ColumnInfo, TableInfo } from "../catalog.ts";

export interface ReadOnlyOptions {
  safeIntegers?: boolean;
  /**
   * How long a read waits for a writer holding the file's lock before failing with SQLITE_BUSY
   * (SQLite's busy_timeout; default 0: fail at once). Query workers wait; the HTTP thread never does.
   */
  busyTimeoutMs?: number;
}

/** SQLITE_BUSY (and its extended codes): a writer holds a lock this read would need. */
export function isBusy(error: unknown): boolean {
  return String((error as { code?: unknown }).code ?? "").startsWith("SQLITE_BUSY");
}

/**
 * Runs one statement to its end and finalizes it. A statement kept in bun:sqlite's query cache can
 * keep the connection's read transaction (and the file's shared lock) open after its last row, so
 * a writer would wait for this connection forever; statements run once are finalized at once.
 */
export function valuesOnce(db: Database, sql: string): unknown[][] {
  const statement = db.prepare(sql);
  try {
    return statement.values() as unknown[][];
  } finally {
    statement.finalize();
  }
}

export function openReadOnly(path: string, options: ReadOnlyOptions = {}): Database {
  const db = new Database(path, { readonly: true, strict: true, safeIntegers: options.safeIntegers ?? false });
  // Belt and braces on top of the read-only open (a second layer, like Datasette).
  db.run("PRAGMA query_only = ON");
  db.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 0))}`);
  return db;
}

/** Reads the configured tables; returns problems (with config paths) for missing ones. */
export function readCatalog(db: Database, tables: TableConfig[]): { catalog: Catalog; problems: string[] } {
  const problems: string[] = [];
  const infos: TableInfo[] = [];
  tables.forEach((config, i) => {
    const row = db
      .query<{ type: string; name: string; sql: string | null }, [string]>(
        "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table','view') AND name = ?1 COLLATE NOCASE",
      )
      .get(config.name);
    if (!row) {
      problems.push(`tables[${i}].name: no table or view named '${config.name}' in the database`);
      return;
    }
    const withoutRowid = row.type === "table" && /\bWITHOUT\s+ROWID\b/i.test(row.sql ?? "");
    const strict = row.type === "table" && db.query<{ strict: number }, [string]>("SELECT strict FROM pragma_table_list(?1)").get(row.name)?.strict === 1;
    const described = db
      .query<{ name: string; type: string; notnull: number; pk: number }, [string]>(
        "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)",
      )
      .all(row.name);
    const keys = described.filter((c) => c.pk > 0);
    // The rowid alias: the only key column, declared exactly INTEGER, of a rowid table.
    const rowidAlias = row.type === "table" && !withoutRowid && keys.length === 1 && keys[0]!.type.toUpperCase() === "INTEGER" ? keys[0]!.name : null;
    const columns = described.map((c) => ({
      name: c.name,
      declaredType: c.type,
      nullable: c.notnull === 0,
      kind: arrowKindFor(c.type),
      numbersOnly: c.name === rowidAlias || (strict && ["INT", "INTEGER", "REAL"].includes(c.type.toUpperCase())),
      description: config.columns[c.name],
    }));
    for (const key of Object.keys(config.columns)) {
      if (!columns.some((c) => c.name === key)) {
        problems.push(`tables[${i}].columns.${key}: no column '${key}' in table '${config.name}'`);
      }
    }
    const limitBounded = row.type === "table" || projectsATable(db, row.sql);
    infos.push({ name: row.name, columns, hasRowid: row.type === "table" && !withoutRowid, limitBounded, config });
  });
  const byName = new Map(infos.map((t) => [t.name.toLowerCase(), t]));
  return {
    catalog: { tables: infos, table: (name) => byName.get(name.toLowerCase()) },
    problems,
  };
}

/** A view that only picks columns of one table (not of another view: its shape is not checked). */
function projectsATable(db: Database, viewSql: string | null): boolean {
  const base = viewSql === null ? null : projectedTable(viewSql);
  if (base === null) return false;
  const found = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE").get(base);
  return (found?.n ?? 0) > 0;
}
