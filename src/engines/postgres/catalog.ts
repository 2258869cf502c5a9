/**
 * A PostgreSQL table's or view's columns, read from the catalog (pg_class, pg_namespace,
 * pg_attribute, pg_type, format_type): names, column types (types.ts, DESIGN.md §14), nullability
 * and `source_type` (format_type's text: "numeric(12,4)", "timestamp with time zone", "integer[]").
 * Read once per table (start-up, `validate`); the typmod a result column's description lacks (Bun's
 * ResultColumn has none) comes from here.
 */
import type { SQL } from "bun";
import { mapPgType, quoteIdent, type ColumnType, type DecodeColumn, type PgTypeRef, type PgWire } from "./types.ts";

export interface PgColumn extends DecodeColumn {
  name: string;
  type: ColumnType;
  /** False for a NOT NULL column (pg_attribute.attnotnull); a view's columns are always nullable. */
  nullable: boolean;
  /** format_type(atttypid, atttypmod): the declared type, for the schema's `source_type` metadata. */
  sourceType: string;
  wire: PgWire;
  /** Selected as `::text` (types.ts selectExpression): a type whose binary form is not decoded. */
  asText: boolean;
}

export type PgRelationKind = "table" | "view" | "materialized view" | "partitioned table" | "foreign table";

export type PgColumnsRead =
  | {
      ok: true;
      kind: PgRelationKind;
      columns: PgColumn[];
      /**
       * A NOT NULL integer column with a unique index of its own (the primary key first), or null:
       * its values are distinct integers, so max − min + 1 bounds the table's rows (read.ts `bound`),
       * as the rowid does for SQLite (engines/sqlite/rowid.ts).
       */
      key: string | null;
    }
  /** The relation cannot be served; `problem` says what to change (the caller adds the config path). */
  | { ok: false; problem: string };

const KINDS: Record<string, PgRelationKind> = { r: "table", v: "view", m: "materialized view", p: "partitioned table", f: "foreign table" };

interface AttributeRow {
  rel: number;
  relkind: string;
  role: string;
  attnum: number | null;
  attname: string | null;
  attnotnull: boolean | null;
  atttypid: number | null;
  atttypmod: number | null;
  source_type: string | null;
  readable: boolean | null;
}

interface TypeRow {
  oid: number;
  typtype: string;
  typbasetype: number;
  typtypmod: number;
  typelem: number;
  typlen: number;
}

/**
 * The columns of `schema`.`table` (names exactly as the catalog spells them: PostgreSQL folds only
 * unquoted names, so `Swaps` and `swaps` differ), in column order. Rejects only when the server
 * cannot be asked (connection, permissions on the catalog).
 */
export async function readPgColumns(sql: SQL, schema: string, table: string): Promise<PgColumnsRead> {
  const attributes = (await sql`
    SELECT c.oid AS rel, c.relkind::text AS relkind, current_user::text AS role,
           a.attnum, a.attname::text AS attname, a.attnotnull, a.atttypid, a.atttypmod,
           format_type(a.atttypid, a.atttypmod) AS source_type,
           has_column_privilege(c.oid, a.attnum, 'SELECT') AS readable
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = ${schema} AND c.relname = ${table} AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
    ORDER BY a.attnum`) as AttributeRow[];
  const named = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  const first = attributes[0];
  if (first === undefined) return { ok: false, problem: await missing(sql, schema, table) };
  const present = attributes.filter((a): a is AttributeRow & { attname: string; atttypid: number; atttypmod: number; source_type: string } => a.attnum !== null);
  if (present.length === 0) return { ok: false, problem: `${named} has no columns: add the columns to serve, or serve another table or view` };
  const unreadable = present.filter((a) => a.readable !== true).map((a) => a.attname);
  if (unreadable.length > 0) {
    return {
      ok: false,
      problem:
        `the role '${first.role}' may not read ${unreadable.length === present.length ? "" : `column(s) ${unreadable.map((n) => `'${n}'`).join(", ")} of `}${named}: ` +
        `run GRANT SELECT ON ${named} TO ${quoteIdent(first.role)} (and USAGE on schema ${quoteIdent(schema)}), or connect as a role that may`,
    };
  }
  const types = await reachableTypes(sql, first.rel);
  const columns = present.map((a): PgColumn => {
    const mapped = mapPgType(resolveType(a.atttypid, a.atttypmod, types));
    return { name: a.attname, type: mapped.type, nullable: a.attnotnull !== true, sourceType: a.source_type, wire: mapped.wire, asText: mapped.asText };
  });
  return { ok: true, kind: KINDS[first.relkind] ?? "table", columns, key: await integerKey(sql, first.rel) };
}

/**
 * The relation's integer key (see PgColumnsRead): a valid, unique, non-partial index on one plain
 * column (no expression) that is NOT NULL and int2, int4 or int8. Committed rows satisfy even a
 * deferrable one, and a read sees only committed rows.
 */
async function integerKey(sql: SQL, rel: number): Promise<string | null> {
  const [row] = (await sql`
    SELECT a.attname::text AS key
    FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = ${rel} AND i.indisunique AND i.indisvalid AND i.indnkeyatts = 1 AND i.indkey[0] <> 0
      AND i.indpred IS NULL AND i.indexprs IS NULL AND a.attnotnull AND a.atttypid IN (20, 21, 23)
    ORDER BY i.indisprimary DESC, a.attnum
    LIMIT 1`) as { key: string }[];
  return row?.key ?? null;
}

/** The problem for a name that is no table or view there, with the relations it may have meant. */
async function missing(sql: SQL, schema: string, table: string): Promise<string> {
  const near = (await sql`
    SELECT n.nspname::text AS schema, c.relname::text AS name
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE lower(c.relname) = lower(${table}) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
      AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    ORDER BY n.nspname = ${schema} DESC, n.nspname, c.relname
    LIMIT 5`) as { schema: string; name: string }[];
  const base = `no table or view named '${table}' in schema '${schema}' of the PostgreSQL database`;
  if (near.length === 0) return `${base}: check the table's name (or source) and the database's schema`;
  const listed = near.map((r) => `'${r.schema}.${r.name}'`).join(", ");
  return `${base}; found ${listed}: name it exactly as listed (PostgreSQL names are case-sensitive) with the schema it is in`;
}

/** The types the relation's columns reach through domains (base type) and arrays (element type). */
async function reachableTypes(sql: SQL, rel: number): Promise<Map<number, TypeRow>> {
  const rows = (await sql`
    WITH RECURSIVE reach(oid) AS (
      SELECT a.atttypid FROM pg_attribute a WHERE a.attrelid = ${rel} AND a.attnum > 0 AND NOT a.attisdropped
      UNION
      SELECT v.next FROM reach r
      JOIN pg_type t ON t.oid = r.oid
      CROSS JOIN LATERAL (VALUES (CASE WHEN t.typtype = 'd' THEN t.typbasetype END),
                                 (CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem END)) v(next)
      WHERE v.next IS NOT NULL
    )
    SELECT t.oid, t.typtype::text AS typtype, t.typbasetype, t.typtypmod, t.typelem, t.typlen
    FROM pg_type t WHERE t.oid IN (SELECT oid FROM reach)`) as TypeRow[];
  return new Map(rows.map((r) => [r.oid, r]));
}

/**
 * A domain is read as its base type, with the nearest typmod on the way (a domain column's own
 * atttypmod is -1; `CREATE DOMAIN amount AS numeric(12,2)` keeps (12,2) in typtypmod). An array
 * type (typelem set, typlen -1: pg_type's documented test) carries its element's typmod.
 */
function resolveType(oid: number, typmod: number, types: ReadonlyMap<number, TypeRow>, depth = 0): PgTypeRef {
  let t = types.get(oid);
  for (let hops = 0; t !== undefined && t.typtype === "d" && hops < 64; hops++) {
    if (typmod === -1) typmod = t.typtypmod;
    oid = t.typbasetype;
    t = types.get(oid);
  }
  if (t !== undefined && t.typelem !== 0 && t.typlen === -1 && depth === 0) {
    return { oid, typmod, element: resolveType(t.typelem, typmod, types, depth + 1) };
  }
  return { oid, typmod };
}
