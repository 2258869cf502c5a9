/**
 * The catalog's shape: the published tables and views, their columns, declared types and
 * nullability, as read once at start-up (engines/sqlite/catalog.ts). SQL validation, Arrow encoding, the
 * routes and the dashboards all work from it; it depends on nothing but the config's types.
 */
import type { ArrowKind, ColumnType, StructField } from "./arrow/types.ts";
import type { TableConfig } from "./config/types.ts";

export interface ColumnInfo {
  name: string;
  /** The declared SQLite type as written in CREATE TABLE ('' when none). */
  declaredType: string;
  nullable: boolean;
  kind: ArrowKind;
  /** decimal128: its precision (1..38) and scale (arrow/types.ts). */
  precision?: number;
  scale?: number;
  /** list: the type of its elements. */
  child?: ColumnType;
  /** struct: its members, in order (arrow/types.ts). */
  fields?: readonly StructField[];
  /**
   * The column is the table's rowid under another name: its values are the rowids, always
   * integers. Read from SQLite by engines/sqlite/catalog.ts (the one place that decides it): `INTEGER PRIMARY
   * KEY` (ASC or none) or `PRIMARY KEY(x)` (ASC, DESC or none) on one column declared exactly
   * INTEGER, in a table with a rowid; not `INTEGER PRIMARY KEY DESC`, `INT PRIMARY KEY`, a
   * composite key, nor any column of a WITHOUT ROWID table.
   */
  rowidAlias: boolean;
  /**
   * SQLite lets no other value than a number in: the rowid alias, or an INT, INTEGER or REAL
   * column of a STRICT table. Any other column may hold text, whatever its type.
   */
  numbersOnly: boolean;
  description?: string;
}

export interface TableInfo {
  /** The name as configured (and as it exists in the database). */
  name: string;
  columns: ColumnInfo[];
  /** False for views and WITHOUT ROWID tables. */
  hasRowid: boolean;
  /**
   * The engine that serves it (engines/engine.ts): its columns' declared types are that engine's
   * (`sqlite_type` in the table document for SQLite, `source_type` for the others).
   */
  engine?: "sqlite" | "postgres" | "duckdb";
  /**
   * A LIMIT n query with no WHERE and no ORDER BY reads at most n stored rows: true for tables, and
   * for views that only pick columns of one table (engines/sqlite/view-shape.ts).
   */
  limitBounded: boolean;
  config: TableConfig;
}

export interface Catalog {
  tables: TableInfo[];
  /** SQLite ignores the case of ASCII letters in names (identifiers.ts); so does this lookup. */
  table(name: string): TableInfo | undefined;
}

