/**
 * The columns of a DuckDB source's tables (DESIGN.md §14): a table or view of the attached file,
 * or the view over a table's files (database.ts), as information_schema.columns has them, with
 * their column types (types.ts). DuckDB's names ignore case, as SQLite's do.
 */
import type { DuckDBInstance } from "@duckdb/node-api";
import { sqlString } from "./database.ts";
import { mapDuckType, type DuckMapped } from "./types.ts";

export interface DuckColumn extends DuckMapped {
  name: string;
  /** The DuckDB type as information_schema writes it ("BIGINT", "DECIMAL(18,3)", "VARCHAR[]", …): `source_type`. */
  sourceType: string;
  nullable: boolean;
}

export async function readDuckColumns(instance: DuckDBInstance, relation: { catalog: string; schema: string; name: string }): Promise<DuckColumn[]> {
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(
      "SELECT column_name, data_type, is_nullable FROM information_schema.columns " +
        `WHERE table_catalog = ${sqlString(relation.catalog)} AND lower(table_schema) = lower(${sqlString(relation.schema)}) AND lower(table_name) = lower(${sqlString(relation.name)}) ` +
        "ORDER BY ordinal_position",
    );
    return reader.getRowsJS().map(([name, type, nullable]) => ({ name: String(name), sourceType: String(type), nullable: nullable !== "NO", ...mapDuckType(String(type)) }));
  } finally {
    connection.closeSync();
  }
}

/** Whether the relation is a table (not a view) of the attached file. */
export async function isBaseTable(instance: DuckDBInstance, relation: { catalog: string; schema: string; name: string }): Promise<boolean> {
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(
      "SELECT count(*) FROM information_schema.tables WHERE table_type = 'BASE TABLE' " +
        `AND table_catalog = ${sqlString(relation.catalog)} AND lower(table_schema) = lower(${sqlString(relation.schema)}) AND lower(table_name) = lower(${sqlString(relation.name)})`,
    );
    return Number(reader.getRowsJS()[0]![0]) > 0;
  } finally {
    connection.closeSync();
  }
}
