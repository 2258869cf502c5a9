/**
 * PostgreSQL column types → column types of COLUMN-TYPES.md, exactly as DESIGN.md §14 lists them,
 * read from the catalog of a real server: type, source_type (format_type), nullability, column
 * order, views, domains, and the problems of a table that cannot be served.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { readPgColumns, type PgColumn } from "../../../src/engines/postgres/catalog.ts";
import { builtinTypeRef, mapPgType, numericTypmod, selectExpression, type ColumnType } from "../../../src/engines/postgres/types.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();
let sql: SQL;

beforeAll(async () => {
  sql = new SQL({ url: postgres.url, max: 2 });
  await sql.unsafe(`
    CREATE DOMAIN amount AS numeric(12,2);
    CREATE DOMAIN positive_amount AS amount CHECK (VALUE > 0);
    CREATE DOMAIN tags AS text[];
    CREATE TYPE mood AS ENUM ('calm', 'wild');
    CREATE TYPE pair AS (a int, b text);
    CREATE SCHEMA analytics;
    CREATE TABLE "Mixed Case" (x int);
    CREATE TABLE analytics.swaps (x int);
    CREATE TABLE nothing ();
    CREATE TABLE secret (visible int, hidden int);
  `);
});

afterAll(async () => {
  await sql?.close();
});

const decimal = (precision: number, scale: number): ColumnType => ({ kind: "decimal128", precision, scale });
const list = (child: ColumnType): ColumnType => ({ kind: "list", child });
const utf8: ColumnType = { kind: "utf8" };

/** [declared type, expected column type, expected source_type, read as ::text] */
const mappings: [string, ColumnType, string, boolean][] = [
  ["int2", { kind: "int16" }, "smallint", false],
  ["int4", { kind: "int32" }, "integer", false],
  ["int8", { kind: "int64" }, "bigint", false],
  ["float4", { kind: "float32" }, "real", false],
  ["float8", { kind: "float64" }, "double precision", false],
  ["numeric(12,4)", decimal(12, 4), "numeric(12,4)", false],
  ["numeric(38,0)", decimal(38, 0), "numeric(38,0)", false],
  ["numeric(38,38)", decimal(38, 38), "numeric(38,38)", false],
  ["numeric(1)", decimal(1, 0), "numeric(1,0)", false],
  ["decimal(10,2)", decimal(10, 2), "numeric(10,2)", false],
  ["numeric(39,2)", utf8, "numeric(39,2)", false],
  ["numeric(1000,0)", utf8, "numeric(1000,0)", false],
  ["numeric", utf8, "numeric", false],
  ["numeric(3,-2)", utf8, "numeric(3,-2)", false],
  ["numeric(3,5)", utf8, "numeric(3,5)", false],
  ["text", utf8, "text", false],
  ["varchar(20)", utf8, "character varying(20)", false],
  ["varchar", utf8, "character varying", false],
  ["char(5)", utf8, "character(5)", false],
  ["bpchar", utf8, "bpchar", false],
  ["name", utf8, "name", false],
  ["bool", { kind: "bool" }, "boolean", false],
  ["date", { kind: "date32" }, "date", false],
  ["timestamp", { kind: "timestamp_us" }, "timestamp without time zone", false],
  ["timestamp(3)", { kind: "timestamp_us" }, "timestamp(3) without time zone", false],
  ["timestamptz", { kind: "timestamp_us_utc" }, "timestamp with time zone", false],
  ["bytea", { kind: "binary" }, "bytea", false],
  ["uuid", utf8, "uuid", false],
  ["json", utf8, "json", false],
  ["jsonb", utf8, "jsonb", false],
  ["int4[]", list({ kind: "int32" }), "integer[]", false],
  ["int4[][]", list({ kind: "int32" }), "integer[]", false],
  ["int8[]", list({ kind: "int64" }), "bigint[]", false],
  ["text[]", list(utf8), "text[]", false],
  ["numeric(5,2)[]", list(decimal(5, 2)), "numeric(5,2)[]", false],
  ["numeric[]", list(utf8), "numeric[]", false],
  ["timestamptz[]", list({ kind: "timestamp_us_utc" }), "timestamp with time zone[]", false],
  ["bytea[]", list({ kind: "binary" }), "bytea[]", false],
  ["jsonb[]", list(utf8), "jsonb[]", false],
  ["uuid[]", list(utf8), "uuid[]", false],
  ["amount", decimal(12, 2), "amount", false],
  ["positive_amount", decimal(12, 2), "positive_amount", false],
  ["amount[]", list(decimal(12, 2)), "amount[]", false],
  ["tags", list(utf8), "tags", false],
  // Anything else: its text form.
  ["inet", utf8, "inet", true],
  ["inet[]", utf8, "inet[]", true],
  ["interval", utf8, "interval", true],
  ["time", utf8, "time without time zone", true],
  ["timetz", utf8, "time with time zone", true],
  ["money", utf8, "money", true],
  ["point", utf8, "point", true],
  ["int4range", utf8, "int4range", true],
  ["mood", utf8, "mood", true],
  ["mood[]", utf8, "mood[]", true],
  ["pair", utf8, "pair", true],
  ["xml", utf8, "xml", true],
  ['"char"', utf8, '"char"', true],
  ["oid", utf8, "oid", true],
];

describe("each PostgreSQL type maps to its column type", () => {
  let columns: PgColumn[] = [];
  beforeAll(async () => {
    const definitions = mappings.map(([declared], i) => `c${i} ${declared}`).join(", ");
    await sql.unsafe(`CREATE TABLE every_type (${definitions})`);
    const read = await readPgColumns(sql, "public", "every_type");
    if (!read.ok) throw new Error(read.problem);
    columns = read.columns;
  });

  test.each(mappings.map((m, i) => [i, ...m] as const))("c%d %s", (i, _declared, type, sourceType, asText) => {
    const column = columns[i]!;
    expect(column.name).toBe(`c${i}`);
    expect(column.type).toEqual(type);
    expect(column.sourceType).toBe(sourceType);
    expect(column.asText).toBe(asText);
    expect(column.nullable).toBe(true);
    expect(selectExpression(column)).toBe(asText ? `"c${i}"::text AS "c${i}"` : `"c${i}"`);
  });
});

describe("relations", () => {
  test("columns in order, NOT NULL read, dropped columns left out, names with quotes kept exactly", async () => {
    await sql.unsafe(`CREATE TABLE ordered (b int8 NOT NULL, dropped int, "a ""quoted"" Name" text, c date PRIMARY KEY)`);
    await sql.unsafe(`ALTER TABLE ordered DROP COLUMN dropped`);
    const read = await readPgColumns(sql, "public", "ordered");
    expect(read).toEqual({
      ok: true,
      kind: "table",
      columns: [
        { name: "b", type: { kind: "int64" }, nullable: false, sourceType: "bigint", wire: "int8", asText: false },
        { name: 'a "quoted" Name', type: utf8, nullable: true, sourceType: "text", wire: "text", asText: false },
        { name: "c", type: { kind: "date32" }, nullable: false, sourceType: "date", wire: "date", asText: false },
      ],
      // Its primary key is a date: no integer key.
      key: null,
    });
    expect(selectExpression(read.ok ? read.columns[1]! : ({} as PgColumn), '"t"')).toBe('"t"."a ""quoted"" Name"');
  });

  test.each([
    ["a primary key of int8", "id int8 PRIMARY KEY, n int4 NOT NULL UNIQUE", "id"],
    ["a NOT NULL int4 with a unique index, when the primary key is not an integer", "code text PRIMARY KEY, n int4 NOT NULL UNIQUE", "n"],
    ["no key: a nullable unique int, a partial unique index, a two-column key", "a int UNIQUE, b int2 NOT NULL, c int NOT NULL, d int NOT NULL, PRIMARY KEY (c, d)", null],
  ])("the integer key that bounds the rows (max − min + 1): %s", async (_, definition, key) => {
    const table = `keyed_${String(key)}_${definition.length}`;
    await sql.unsafe(`CREATE TABLE ${table} (${definition})`);
    await sql.unsafe(`CREATE UNIQUE INDEX ON ${table} (${definition.startsWith("a int") ? "b) WHERE b > 0" : "n)"}`);
    const read = await readPgColumns(sql, "public", table);
    if (!read.ok) throw new Error(read.problem);
    expect(read.key).toBe(key);
  });

  test("a view: the typmods of its expressions, every column nullable", async () => {
    await sql.unsafe(`CREATE TABLE base (n numeric(12,4) NOT NULL, a amount, i int8 NOT NULL, t timestamptz)`);
    await sql.unsafe(`CREATE VIEW derived AS SELECT n, a, i * 2 AS doubled, n + 1 AS computed, t::date AS day, ARRAY[i] AS ids FROM base`);
    const read = await readPgColumns(sql, "public", "derived");
    if (!read.ok) throw new Error(read.problem);
    expect(read.kind).toBe("view");
    expect(read.columns.map((c) => [c.name, c.type, c.sourceType, c.nullable])).toEqual([
      ["n", decimal(12, 4), "numeric(12,4)", true],
      ["a", decimal(12, 2), "amount", true],
      ["doubled", { kind: "int64" }, "bigint", true],
      ["computed", utf8, "numeric", true],
      ["day", { kind: "date32" }, "date", true],
      ["ids", list({ kind: "int64" }), "bigint[]", true],
    ]);
  });

  test.each([
    ["materialized view", "CREATE MATERIALIZED VIEW mv AS SELECT 1::int2 AS one", "mv"],
    ["partitioned table", "CREATE TABLE parted (k int) PARTITION BY RANGE (k)", "parted"],
  ])("a %s is served too", async (kind, ddl, name) => {
    await sql.unsafe(ddl);
    const read = await readPgColumns(sql, "public", name);
    expect(read.ok && read.kind).toBe(kind as never);
  });

  test("a table in another schema", async () => {
    const read = await readPgColumns(sql, "analytics", "swaps");
    expect(read.ok && read.columns.map((c) => c.name)).toEqual(["x"]);
  });
});

describe("problems", () => {
  test("a missing table names what is missing and where", async () => {
    expect(await readPgColumns(sql, "public", "no_such_table")).toEqual({
      ok: false,
      problem: "no table or view named 'no_such_table' in schema 'public' of the PostgreSQL database: check the table's name (or source) and the database's schema",
    });
  });

  test("a name spelled in another case, or in another schema: the relations it may have meant", async () => {
    const cased = await readPgColumns(sql, "public", "mixed case");
    expect(cased).toEqual({
      ok: false,
      problem:
        "no table or view named 'mixed case' in schema 'public' of the PostgreSQL database; found 'public.Mixed Case': name it exactly as listed (PostgreSQL names are case-sensitive) with the schema it is in",
    });
    const elsewhere = await readPgColumns(sql, "public", "swaps");
    expect(elsewhere.ok === false && elsewhere.problem).toContain("found 'analytics.swaps'");
  });

  test("an index or a sequence is no table", async () => {
    await sql.unsafe(`CREATE SEQUENCE counter; CREATE INDEX secret_visible ON secret (visible)`);
    for (const name of ["counter", "secret_visible"]) {
      const read = await readPgColumns(sql, "public", name);
      expect(read.ok).toBe(false);
    }
  });

  test("a table without columns", async () => {
    expect(await readPgColumns(sql, "public", "nothing")).toEqual({
      ok: false,
      problem: `"public"."nothing" has no columns: add the columns to serve, or serve another table or view`,
    });
  });

  test("a role that may not read the table, or some of its columns: the GRANT to run", async () => {
    await sql.unsafe(`CREATE ROLE reader LOGIN; GRANT SELECT (visible) ON secret TO reader; CREATE TABLE closed (x int)`);
    const url = new URL(postgres.url);
    url.username = "reader";
    const reader = new SQL({ url: url.toString(), max: 1 });
    try {
      const partly = await readPgColumns(reader, "public", "secret");
      expect(partly).toEqual({
        ok: false,
        problem: `the role 'reader' may not read column(s) 'hidden' of "public"."secret": run GRANT SELECT ON "public"."secret" TO "reader" (and USAGE on schema "public"), or connect as a role that may`,
      });
      const closed = await readPgColumns(reader, "public", "closed");
      expect(closed.ok === false && closed.problem).toStartWith(`the role 'reader' may not read "public"."closed": run GRANT SELECT`);
    } finally {
      await reader.close();
    }
  });
});

describe("without the catalog", () => {
  test("numeric typmods: precision and scale, negative scales (PostgreSQL 15), none", () => {
    expect(numericTypmod(-1)).toBeNull();
    expect(numericTypmod(((12 << 16) | 4) + 4)).toEqual({ precision: 12, scale: 4 });
    expect(numericTypmod(((3 << 16) | (-2 & 0x7ff)) + 4)).toEqual({ precision: 3, scale: -2 });
  });

  test("a built-in array OID resolves to its element; an unknown OID is text", () => {
    expect(mapPgType(builtinTypeRef(1007))).toEqual({ type: list({ kind: "int32" }), wire: { array: "int4" }, asText: false });
    expect(mapPgType(builtinTypeRef(1231, ((10 << 16) | 2) + 4))).toEqual({ type: list(decimal(10, 2)), wire: { array: "numeric" }, asText: false });
    expect(mapPgType(builtinTypeRef(869))).toEqual({ type: utf8, wire: "text", asText: true });
  });
});
