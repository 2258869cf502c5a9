/**
 * Small reads of a real PostgreSQL through the engine (src/engines/postgres/engine.ts readWhole;
 * ARCHITECTURE.md §9 "The PostgreSQL engine"): what is made once per validated query and kept —
 * its read plan, the decoders of its finished small reads, its Arrow schema message
 * (pulled-read.ts arrowFrame) — never changes an answer. The same text read again, at once and
 * after the data changed, other texts on the same engine, a table changed and described anew, and
 * reads that failed or grew wide in between all answer exactly the rows PostgreSQL holds then.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { tableFromIPC, type Table } from "apache-arrow";
import type { Catalog } from "../../../src/catalog.ts";
import { resolveConfig } from "../../../src/config/load.ts";
import type { Config } from "../../../src/config/types.ts";
import type { TableEngine } from "../../../src/engines/engine.ts";
import { describeCatalog, openEngines } from "../../../src/engines/sources.ts";
import { QueryExecutor } from "../../../src/results/executor.ts";
import type { QueryResult } from "../../../src/results/result-stream.ts";
import { validateQuery, type ValidatedQuery } from "../../../src/sql/dialect.ts";
import { usePostgres } from "../../support/postgres.ts";

const pg = usePostgres();
let admin: SQL;
let config: Config;
let engines: Map<string, TableEngine>;
let catalog: Catalog;
let executor: QueryExecutor;

beforeAll(async () => {
  admin = new SQL(pg.url, { max: 1 });
  await admin.unsafe(`CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, price double precision, seen timestamptz, tag bytea);
    INSERT INTO items SELECT x, 'item ' || x, CASE WHEN x % 3 = 0 THEN NULL ELSE x * 0.5 END, timestamptz '2024-01-01 00:00:00+00' + x * interval '1 hour',
        CASE WHEN x % 4 = 0 THEN NULL ELSE decode(md5(x::text), 'hex') END
      FROM generate_series(1, 100) x;`);
  config = resolveConfig({ databases: { main: { postgres: pg.url, max_connections: 4 } }, tables: [{ name: "items" }] }, { baseDir: "/", env: {} });
  engines = openEngines(config, { workers: 1 }) as Map<string, TableEngine>;
  catalog = await describeCatalog(config, engines);
  executor = new QueryExecutor(engines, config.limits);
}, 60_000);

afterAll(async () => {
  executor?.close();
  await admin?.close();
});

const validated = (sql: string, against: Catalog = catalog): ValidatedQuery => validateQuery(sql, against, { maxQueryBytes: 16_384 });

async function read(query: ValidatedQuery): Promise<{ bytes: Uint8Array; table: Table }> {
  const result: QueryResult = await executor.stream(query);
  // A small result is read whole: one buffer, no stream.
  if (!("complete" in result)) throw new Error("expected a result read whole");
  const bytes = new Uint8Array(await new Blob(result.complete as BlobPart[]).arrayBuffer());
  return { bytes, table: tableFromIPC(bytes) };
}

/** The rows as plain values, for comparison with what PostgreSQL says. */
function rowsOf(table: Table): unknown[][] {
  return table.toArray().map((row) => Object.values(row.toJSON()).map((v) => (v instanceof Date ? v.getTime() : v)));
}

/** What PostgreSQL holds now for `sql` (a select of items), in the Arrow reader's terms. */
async function expected(sql: string): Promise<unknown[][]> {
  const rows = (await admin.unsafe(sql).values()) as unknown[][];
  return rows.map((row) => row.map((v) => (v instanceof Date ? v.getTime() : typeof v === "string" && /^\d+$/.test(v) ? BigInt(v) : v)));
}

describe("a small query read again", () => {
  const sql = "SELECT id, name, price FROM items WHERE id > 40 AND id <= 50 ORDER BY id";
  const pgSql = "SELECT id::text, name, price FROM items WHERE id > 40 AND id <= 50 ORDER BY items.id";

  test("answers the same bytes every time, one read at a time and many at once", async () => {
    const query = validated(sql);
    const first = await read(query);
    expect(rowsOf(first.table)).toEqual(await expected(pgSql));
    for (let i = 0; i < 5; i++) expect((await read(query)).bytes).toEqual(first.bytes);
    const together = await Promise.all(Array.from({ length: 12 }, () => read(query)));
    for (const answer of together) expect(answer.bytes).toEqual(first.bytes);
  });

  test("answers the rows as they are now after the data changed (nothing is kept of them)", async () => {
    const query = validated(sql);
    await read(query);
    await admin.unsafe("UPDATE items SET name = 'renamed', price = NULL WHERE id = 45");
    const after = await read(query);
    expect(rowsOf(after.table)).toEqual(await expected(pgSql));
    expect(rowsOf(after.table)[4]).toEqual([45n, "renamed", null]);
    await admin.unsafe("UPDATE items SET name = 'item 45', price = 22.5 WHERE id = 45");
    expect(rowsOf((await read(query)).table)).toEqual(await expected(pgSql));
  });

  test("after a read that failed on a value, and one too wide to keep its decoder, the next reads are right", async () => {
    const ranged = "SELECT id, name, seen FROM items WHERE id >= 60 ORDER BY id";
    const pgRanged = "SELECT id::text, name, seen FROM items WHERE id >= 60 ORDER BY items.id";
    const query = validated(ranged);
    const before = await read(query);
    expect(rowsOf(before.table)).toEqual(await expected(pgRanged));
    // A value no timestamp column holds, mid-result: the read fails at its row.
    await admin.unsafe("UPDATE items SET seen = 'infinity' WHERE id = 70");
    await expect(read(query)).rejects.toThrow(/infinity/);
    await admin.unsafe("UPDATE items SET seen = timestamptz '2024-01-01 00:00:00+00' + 70 * interval '1 hour' WHERE id = 70");
    expect((await read(query)).bytes).toEqual(before.bytes);
    // Wide: many rows of long names (its decoders grow past what is kept), then small again.
    await admin.unsafe("INSERT INTO items SELECT x, repeat('w', 200) || x, NULL, NULL FROM generate_series(1001, 3000) x");
    const wide = await read(query);
    expect(wide.table.numRows).toBe(41 + 2000);
    expect(rowsOf(wide.table)).toEqual(await expected(pgRanged));
    await admin.unsafe("DELETE FROM items WHERE id > 1000");
    expect((await read(query)).bytes).toEqual(before.bytes);
  });
});

describe("texts and tables", () => {
  test("a query with a column not taken straight into Arrow (bytea: rows of values, then encoded): read again, the same rows", async () => {
    const query = validated("SELECT id, tag FROM items WHERE id <= 8 ORDER BY id");
    const first = await read(query);
    const rows = rowsOf(first.table);
    expect(rows.map((row) => [row[0], row[1] === null ? null : Buffer.from(row[1] as Uint8Array).toString("hex")])).toEqual(
      (await admin.unsafe("SELECT id::text, encode(tag, 'hex') FROM items WHERE id <= 8 ORDER BY items.id").values()).map((row: [string, string | null]) => [BigInt(row[0]), row[1]]),
    );
    for (let i = 0; i < 3; i++) expect((await read(query)).bytes).toEqual(first.bytes);
  });

  test("other texts on the same engine get their own columns and schema, in turn", async () => {
    const a = validated("SELECT id, name FROM items WHERE id <= 3 ORDER BY id");
    const b = validated("SELECT price, name AS label, seen FROM items WHERE id <= 3 ORDER BY id");
    for (let i = 0; i < 3; i++) {
      const [ta, tb] = [(await read(a)).table, (await read(b)).table];
      expect(ta.schema.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
        ["id", "Int64", false],
        ["name", "Utf8", false],
      ]);
      expect(tb.schema.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
        ["price", "Float64", true],
        ["label", "Utf8", false],
        ["seen", "Timestamp<MICROSECOND, UTC>", true],
      ]);
      expect(rowsOf(ta)).toEqual([
        [1n, "item 1"],
        [2n, "item 2"],
        [3n, "item 3"],
      ]);
      expect(rowsOf(tb).map((row) => row.slice(0, 2))).toEqual([
        [0.5, "item 1"],
        [1, "item 2"],
        [null, "item 3"],
      ]);
    }
  });

  test("a table changed and described anew (as a reload does): the same text answers with the new types", async () => {
    const text = "SELECT id, price FROM items WHERE id <= 2 ORDER BY id";
    const old = await read(validated(text));
    expect(old.table.schema.fields.map((f) => String(f.type))).toEqual(["Int64", "Float64"]);
    await admin.unsafe("ALTER TABLE items ALTER COLUMN price TYPE text USING price::text");
    try {
      // The same engines, a new config's tables: what a reload describes.
      const next = resolveConfig({ databases: { main: { postgres: pg.url, max_connections: 4 } }, tables: [{ name: "items" }] }, { baseDir: "/", env: {} });
      const described = await describeCatalog(next, engines);
      const answer = await read(validated(text, described));
      expect(answer.table.schema.fields.map((f) => String(f.type))).toEqual(["Int64", "Utf8"]);
      expect(rowsOf(answer.table)).toEqual([
        [1n, "0.5"],
        [2n, "1"],
      ]);
    } finally {
      await admin.unsafe("ALTER TABLE items ALTER COLUMN price TYPE double precision USING price::double precision");
    }
  });
});
