/**
 * The catalog: the configured tables and views, their columns, declared types and nullability,
 * read once at start-up from a read-only connection. SQL validation and Arrow encoding both
 * work from it, so the schema of a result is known before the query runs.
 */
import { Database } from "bun:sqlite";
import { arrowKindFor } from "../../arrow/types.ts";
import type { Catalog, ColumnInfo, TableInfo } from "../../catalog.ts";
import type { TableConfig } from "../../config/types.ts";
import { foldCase, sameName } from "../../identifiers.ts";
import { projectedTable } from "./view-shape.ts";

export type { Catalog, ColumnInfo, TableInfo } from "../../catalog.ts";

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
  const { tables: infos, problems } = describeTables(db, tables.map((config, index) => ({ config, index })));
  const byName = new Map(infos.map((t) => [foldCase(t.name), t]));
  return {
    catalog: { tables: infos, table: (name) => byName.get(foldCase(name)) },
    problems,
  };
}

/** The tables of the config at their indices, as the file has them, and a problem for each one missing. */
export function describeTables(db: Database, tables: readonly { config: TableConfig; index: number }[]): { tables: TableInfo[]; problems: string[] } {
  const problems: string[] = [];
  const infos: TableInfo[] = [];
  tables.forEach(({ config, index: i }) => {
    const row = db
      .query<{ type: string; name: string; sql: string | null }, [string]>(
        "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table','view') AND name = ?1 COLLATE NOCASE",
      )
      .get(config.name);
    if (!row) {
      problems.push(`tables[${i}].name: no table or view named '${config.name}' in the database`);
      return;
    }
    const found = described(db, row.name);
    const form = tableForm(db, row.name, row.type === "table", found);
    const columns = found.map((c) => ({
      name: c.name,
      declaredType: c.type,
      nullable: c.notnull === 0,
      kind: arrowKindFor(c.type),
      rowidAlias: c.name === form.rowidAlias,
      numbersOnly: c.name === form.rowidAlias || (form.strict && ["INT", "INTEGER", "REAL"].includes(c.type.toUpperCase())),
      description: Object.entries(config.columns).find(([key]) => sameName(key, c.name))?.[1],
    }));
    for (const key of Object.keys(config.columns)) {
      if (!columns.some((c) => sameName(c.name, key))) {
        problems.push(`tables[${i}].columns.${key}: no column '${key}' in table '${config.name}'`);
      }
    }
    const limitBounded = row.type === "table" || projectsATable(db, row.sql);
    infos.push({ name: row.name, columns, hasRowid: form.hasRowid, limitBounded, config });
  });
  return { tables: infos, problems };
}

interface DescribedColumn {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

function described(db: Database, table: string): DescribedColumn[] {
  return db.query<DescribedColumn, [string]>("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1, 'main')").all(table);
}

/**
 * What SQLite itself says of a table's storage, never read from its CREATE text (a comment can sit
 * between WITHOUT and ROWID; a default can be the string 'without rowid'):
 * - whether it has a rowid, and whether it is STRICT: pragma table_list;
 * - its rowid alias: SQLite builds an index for every PRIMARY KEY (pragma index_list, origin 'pk')
 *   except the one it makes the rowid's alias (sqlite3AddPrimaryKey), so a rowid table whose key is
 *   one column and has no such index keeps that key as its rowid. Exact where the rules of
 *   lang_createtable.html#rowid are subtle: `INTEGER PRIMARY KEY DESC` is not an alias (an index is
 *   built), `PRIMARY KEY(x DESC)` on an INTEGER x is, and so is `INTEGER NOT NULL PRIMARY KEY`.
 */
function tableForm(db: Database, table: string, isTable: boolean, columns: DescribedColumn[]): { hasRowid: boolean; strict: boolean; rowidAlias: string | null } {
  if (!isTable) return { hasRowid: false, strict: false, rowidAlias: null };
  const listed = db
    .query<{ wr: number; strict: number }, [string]>("SELECT wr, strict FROM pragma_table_list(?1) WHERE schema = 'main'")
    .get(table);
  const hasRowid = listed?.wr !== 1;
  const keys = columns.filter((c) => c.pk > 0);
  const keyIndexed = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM pragma_index_list(?1, 'main') WHERE origin = 'pk'").get(table)!.n > 0;
  const rowidAlias = hasRowid && keys.length === 1 && !keyIndexed ? keys[0]!.name : null;
  return { hasRowid, strict: listed?.strict === 1, rowidAlias };
}

/** A view that only picks columns of one table (not of another view: its shape is not checked). */
function projectsATable(db: Database, viewSql: string | null): boolean {
  const base = viewSql === null ? null : projectedTable(viewSql);
  if (base === null) return false;
  const found = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE").get(base);
  return (found?.n ?? 0) > 0;
}
