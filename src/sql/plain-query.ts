/**
 * What crosses between the HTTP thread and a validation worker (validator.ts): the catalog as
 * plain data one way, a ValidatedQuery as indices into the catalog the other way, re-linked on the
 * HTTP thread to the catalog's own TableInfo and ColumnInfo objects (the executor and the Arrow
 * encoder compare and read those).
 */
import type { Catalog, ColumnInfo, TableInfo } from "../catalog.ts";
import { foldCase } from "../identifiers.ts";
import type { ValidatedQuery } from "./validated.ts";

/** What validation reads of a table; prices and descriptions stay on the HTTP thread. */
export interface TableShape {
  name: string;
  columns: ColumnInfo[];
  hasRowid: boolean;
  limitBounded: boolean;
}

export interface PlainQuery extends Omit<ValidatedQuery, "table" | "columns"> {
  table: number;
  columns: { name: string; column: number }[];
}

export type ToValidator = { type: "init"; tables: TableShape[]; maxQueryBytes: number } | { type: "validate"; id: number; sql: string };

export type FromValidator =
  | { type: "ready" }
  | { type: "valid"; id: number; query: PlainQuery }
  /** `refused`: a 400 with this message; otherwise the validator failed unexpectedly. */
  | { type: "invalid"; id: number; refused: boolean; message: string };

export function tableShapes(catalog: Catalog): TableShape[] {
  return catalog.tables.map(({ name, columns, hasRowid, limitBounded }) => ({ name, columns, hasRowid, limitBounded }));
}

/** A catalog over table shapes, looked up as engines/sqlite/catalog.ts does (ignoring ASCII case: identifiers.ts). */
export function shapeCatalog(shapes: TableShape[]): Catalog {
  const tables: TableInfo[] = shapes.map((shape) => ({ ...shape, config: { name: shape.name, database: "", source: shape.name, description: "", columns: {}, priceTags: [] } }));
  const byName = new Map(tables.map((t) => [foldCase(t.name), t]));
  return { tables, table: (name) => byName.get(foldCase(name)) };
}

export function toPlain(query: ValidatedQuery, catalog: Catalog): PlainQuery {
  const table = catalog.tables.indexOf(query.table);
  return {
    ...query,
    table,
    columns: query.columns.map(({ name, column }) => ({ name, column: query.table.columns.indexOf(column) })),
  };
}

export function fromPlain(plain: PlainQuery, catalog: Catalog): ValidatedQuery {
  const table = catalog.tables[plain.table]!;
  return {
    ...plain,
    table,
    columns: plain.columns.map(({ name, column }) => ({ name, column: table.columns[column]! })),
  };
}
