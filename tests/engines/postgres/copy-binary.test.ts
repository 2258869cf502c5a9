/**
 * The binary COPY decoder as a stream decoder: the same rows whatever the chunks (1 byte … 64 KiB,
 * values of megabytes split across them), work linear in the bytes, batches cut at a row count or
 * a byte budget, and a stream that is cut short, has trailing bytes or other columns refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { BinaryCopyDecoder } from "../../../src/engines/postgres/copy-binary.ts";
import { readPgColumns, type PgColumn } from "../../../src/engines/postgres/catalog.ts";
import { selectExpression, type DecodeColumn } from "../../../src/engines/postgres/types.ts";
import { ServerError } from "../../../src/errors.ts";
import { BATCH_MAX_BYTES, BATCH_ROWS } from "../../../src/engines/sqlite/protocol.ts";
import { usePostgres } from "../../support/postgres.ts";
import { mulberry32 } from "../../support/random.ts";
import { copyBytes, decodeInChunks, randomChunkSizes, thrown } from "./support.ts";

const postgres = usePostgres();
let sql: SQL;
const MB = 1024 * 1024;

/** Text of `length` characters mixing ASCII, 2-, 3- and 4-byte UTF-8 characters. */
function mixedText(length: number, seed: number): string {
  const random = mulberry32(seed);
  const alphabet = ["a", "b", "z", "0", " ", "é", "ß", "中", "∑", "🌍", "𝄞"];
  let text = "";
  while (text.length < length) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

function randomBytes(length: number, seed: number): Uint8Array {
  const random = mulberry32(seed);
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

const big = { text: mixedText(MB, 1), blob: randomBytes(MB, 2) };
let mixed: { columns: PgColumn[]; bytes: Uint8Array; rows: number };
/** The first 300 rows of `mixed`, for chunks of a few bytes. */
let firstRows: Uint8Array;

beforeAll(async () => {
  sql = new SQL({ url: postgres.url, max: 2 });
  await sql.unsafe(`
    CREATE TABLE mixed (id int8 PRIMARY KEY, n numeric(20,6), t text, b bytea, ts timestamptz, a int4[], j jsonb, u uuid, d date, f float8, i inet);
    INSERT INTO mixed
    SELECT g, CASE WHEN g % 5 = 0 THEN NULL ELSE (g * 1234.567891 - 50000)::numeric(20,6) END,
           CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('é∑x', g % 40) END,
           CASE WHEN g % 3 = 0 THEN NULL ELSE decode(md5(g::text), 'hex') END,
           timestamptz '1999-12-31 23:59:59.999999+00' + g * interval '1 day 00:00:00.000001',
           CASE WHEN g % 4 = 0 THEN '{}' ELSE ARRAY[g, NULL, -g] END,
           jsonb_build_object('g', g, 'name', 'n' || g),
           md5(g::text)::uuid, date '1900-01-01' + g, g / 7.0, ('10.0.' || (g % 256) || '.1')::inet
    FROM generate_series(1, 3000) g;
    CREATE TABLE wide (id int PRIMARY KEY, t text, b bytea);
  `);
  await sql`INSERT INTO wide VALUES (1, ${big.text}, ${big.blob}), (2, 'small', '\\x00'::bytea), (3, ${big.text.slice(7)}, ${big.blob.subarray(3)})`;
  const read = await readPgColumns(sql, "public", "mixed");
  if (!read.ok) throw new Error(read.problem);
  const bytes = await copyBytes(sql, `SELECT ${read.columns.map((c) => selectExpression(c)).join(", ")} FROM mixed ORDER BY id`);
  mixed = { columns: read.columns, bytes, rows: 3000 };
  firstRows = await copyBytes(sql, `SELECT ${read.columns.map((c) => selectExpression(c)).join(", ")} FROM mixed ORDER BY id LIMIT 300`);
});

afterAll(async () => {
  await sql?.close();
});

describe("chunks", () => {
  test("random chunk sizes from 1 byte to 64 KiB give the same rows as one chunk", () => {
    const whole = decodeInChunks(mixed.columns, mixed.bytes).rows;
    expect(whole.length).toBe(mixed.rows);
    expect(whole[0]![0]).toBe(1n);
    for (let seed = 1; seed <= 8; seed++) {
      expect(decodeInChunks(mixed.columns, mixed.bytes, randomChunkSizes(seed)).rows).toEqual(whole);
    }
  });

  test.each([1, 2, 3, 5, 19, 20, 4096])("chunks of %d bytes give the same rows", (size) => {
    const whole = decodeInChunks(mixed.columns, firstRows).rows;
    expect(whole.length).toBe(300);
    expect(decodeInChunks(mixed.columns, firstRows, () => size).rows).toEqual(whole);
  });

  test("1 MB text and bytea values split across chunks round-trip exactly", async () => {
    const read = await readPgColumns(sql, "public", "wide");
    if (!read.ok) throw new Error(read.problem);
    const bytes = await copyBytes(sql, `SELECT id, t, b FROM wide ORDER BY id`);
    const expected = [
      [1, big.text, big.blob],
      [2, "small", new Uint8Array([0])],
      [3, big.text.slice(7), big.blob.subarray(3)],
    ];
    for (const size of [() => bytes.length, () => 65_536, () => 1000, randomChunkSizes(3)]) {
      const rows = decodeInChunks(read.columns, bytes, size).rows;
      expect(rows.length).toBe(3);
      // Compared value by value: a failure then shows where, not two megabytes.
      for (let r = 0; r < 3; r++) {
        expect(rows[r]![0]).toBe(expected[r]![0]!);
        expect(rows[r]![1] === expected[r]![1]).toBe(true);
        expect(Buffer.from(rows[r]![2] as Uint8Array).equals(expected[r]![2] as Uint8Array)).toBe(true);
        expect((rows[r]![2] as Uint8Array).constructor).toBe(Uint8Array);
      }
    }
  });

  test("a 16 MB value fed in 1 KiB chunks is gathered in linear time", async () => {
    const columns: DecodeColumn[] = [{ name: "t", type: { kind: "utf8" }, wire: "text" }];
    const bytes = await copyBytes(sql, `SELECT repeat('abcdefgh', 2 * 1024 * 1024)`);
    const started = performance.now();
    const { rows } = decodeInChunks(columns, bytes, () => 1024);
    const elapsed = performance.now() - started;
    expect((rows[0]![0] as string).length).toBe(16 * MB);
    // 16,384 chunks: gathering copies the 16 MB once (well under a second here); joining what is
    // left with each new chunk, as the prototype did, copies about 128 GB.
    expect(elapsed).toBeLessThan(10_000);
  });

  test("a stream cut anywhere is refused at its end, never returned as complete", () => {
    for (const cut of [0, 5, 19, 21, 100, mixed.bytes.length - 2, mixed.bytes.length - 1]) {
      const decoder = new BinaryCopyDecoder(mixed.columns);
      decoder.push(mixed.bytes.slice(0, cut));
      const error = thrown(() => decoder.end());
      expect(error).toBeInstanceOf(ServerError);
      expect((error as Error).message).toMatch(/^the PostgreSQL COPY stream ended (inside its header|after \d+ rows without its end marker)$/);
    }
  });
});

describe("batches", () => {
  test("end at batchRows rows; each knows its first row's index", () => {
    const { batches } = decodeInChunks(mixed.columns, mixed.bytes, randomChunkSizes(4), { batchRows: 1000 });
    expect(batches.map((b) => [b.firstRowIndex, b.rows.length])).toEqual([
      [0, 1000],
      [1000, 1000],
      [2000, 1000],
    ]);
    const odd = decodeInChunks(mixed.columns, mixed.bytes, randomChunkSizes(5), { batchRows: 7 }).batches;
    expect(odd.length).toBe(Math.ceil(3000 / 7));
    expect(odd.at(-1)!.rows.length).toBe(3000 % 7);
    expect(odd.every((b, i) => b.firstRowIndex === i * 7)).toBe(true);
  });

  test("defaults: BATCH_ROWS rows, and BATCH_MAX_BYTES of text, blobs and lists", async () => {
    const narrow: DecodeColumn[] = [{ name: "g", type: { kind: "int32" }, wire: "int4" }];
    const rows = 2 * BATCH_ROWS + 1_000;
    const counted = decodeInChunks(narrow, await copyBytes(sql, `SELECT g FROM generate_series(1, ${rows}) g`), randomChunkSizes(6)).batches;
    expect(counted.map((b) => b.rows.length)).toEqual([BATCH_ROWS, BATCH_ROWS, 1_000]);

    // Rows of 1 MiB: a batch ends with the row that brings it to 4 MiB.
    const columns: DecodeColumn[] = [
      { name: "g", type: { kind: "int32" }, wire: "int4" },
      { name: "t", type: { kind: "utf8" }, wire: "text" },
    ];
    const bytes = await copyBytes(sql, `SELECT g, repeat('x', ${MB}) FROM generate_series(1, 10) g`);
    const batches = decodeInChunks(columns, bytes, randomChunkSizes(7)).batches;
    expect(batches.map((b) => [b.firstRowIndex, b.rows.length, b.wideBytes])).toEqual([
      [0, 4, BATCH_MAX_BYTES],
      [4, 4, BATCH_MAX_BYTES],
      [8, 2, 2 * MB],
    ]);
  });

  test("a byte budget counts text, bytea and array values, not fixed-width ones", async () => {
    const columns: DecodeColumn[] = [
      { name: "i", type: { kind: "int64" }, wire: "int8" },
      { name: "b", type: { kind: "binary" }, wire: "bytea" },
      { name: "a", type: { kind: "list", child: { kind: "int32" } }, wire: { array: "int4" } },
    ];
    // Per row: 144 bytes, a bytea of 100 and an array of 3 int4 (12-byte header, 8-byte dimension, 3 × (4 + 4)).
    const bytes = await copyBytes(sql, `SELECT g::int8, decode(repeat('ab', 100), 'hex'), ARRAY[g, g, g] FROM generate_series(1, 10) g`);
    const batches = decodeInChunks(columns, bytes, () => 7, { batchMaxBytes: 400 }).batches;
    expect(batches.map((b) => [b.rows.length, b.wideBytes])).toEqual([
      [3, 3 * 144],
      [3, 3 * 144],
      [3, 3 * 144],
      [1, 144],
    ]);
  });
});

describe("streams that are not the columns' COPY", () => {
  test("a text COPY is not a binary one", async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of sql.unsafe(`COPY (SELECT 1) TO STDOUT`).readable()) chunks.push(chunk);
    // "1\n", and enough bytes after it to hold a binary header.
    const text = Buffer.concat([...chunks, new Uint8Array(30)]);
    const error = thrown(() => new BinaryCopyDecoder([{ name: "x", type: { kind: "int32" }, wire: "int4" }]).push(text));
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toBe("the PostgreSQL answer is not a binary COPY stream (its signature differs)");
  });

  test("rows of another number of columns", async () => {
    const bytes = await copyBytes(sql, `SELECT 1, 2`);
    const error = thrown(() => decodeInChunks([{ name: "x", type: { kind: "int32" }, wire: "int4" }], bytes));
    expect((error as Error).message).toBe("the PostgreSQL COPY stream has rows of 2 fields where 1 columns were expected");
  });

  test("a column whose type changed since the catalog was read: named, with what to do", async () => {
    const bytes = await copyBytes(sql, `SELECT 1::int4 UNION ALL SELECT 2`);
    const error = thrown(() => decodeInChunks([{ name: "amount", type: { kind: "int64" }, wire: "int8" }], bytes, () => 3));
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toBe(
      "column 'amount' of the PostgreSQL COPY holds a 4-byte value where int8 has 8 bytes at row 0: its type is no longer the one read from the catalog; run 'arrow402 validate' and restart the server after a change of the table",
    );
  });

  test("bytes after the end marker", async () => {
    const bytes = await copyBytes(sql, `SELECT 1::int4`);
    const padded = new Uint8Array(bytes.length + 1);
    padded.set(bytes);
    const error = thrown(() => decodeInChunks([{ name: "x", type: { kind: "int32" }, wire: "int4" }], padded));
    expect((error as Error).message).toBe("the PostgreSQL COPY stream has 1 bytes after its end marker");
  });

  test("with onRefused (arrow402 validate), every refused value is told with its column and row, reads as null, and the stream goes on", async () => {
    const bytes = await copyBytes(
      sql,
      `SELECT * FROM (VALUES (1, 'infinity'::timestamptz, 'NaN'::numeric(5,2)), (2, now(), 1.5), (3, '-infinity', 'NaN'), (4, '2024-01-01 00:00:00+00', 2.25)) AS t(id, at, price)`,
    );
    const columns: DecodeColumn[] = [
      { name: "id", type: { kind: "int32" }, wire: "int4" },
      { name: "at", type: { kind: "timestamp_us_utc" }, wire: "timestamp" },
      { name: "price", type: { kind: "decimal128", precision: 5, scale: 2 }, wire: "numeric" },
    ];
    for (const size of [() => 1, () => 7, () => bytes.length]) {
      const refused: [string, number, number, string][] = [];
      const { rows } = decodeInChunks(columns, bytes, size, { onRefused: (r) => void refused.push([r.column, r.columnIndex, r.rowIndex, r.detail]) });
      expect(rows.map((row) => row[0])).toEqual([1, 2, 3, 4]);
      expect(rows[0]!.slice(1)).toEqual([null, null]);
      expect(rows[3]!.slice(1)).toEqual([1704067200000000n, 225n]);
      expect(refused).toEqual([
        ["at", 1, 0, "timestamp 'infinity' is no point in time a timestamp column holds"],
        ["price", 2, 0, "numeric NaN is not a number Decimal128(5, 2) can hold"],
        ["at", 1, 2, "timestamp '-infinity' is no point in time a timestamp column holds"],
        ["price", 2, 2, "numeric NaN is not a number Decimal128(5, 2) can hold"],
      ]);
    }
  });

  test("after a failure the decoder keeps failing the same way", async () => {
    const bytes = await copyBytes(sql, `SELECT 'infinity'::date`);
    const decoder = new BinaryCopyDecoder([{ name: "d", type: { kind: "date32" }, wire: "date" }]);
    const first = thrown(() => decoder.push(bytes));
    expect(thrown(() => decoder.push(new Uint8Array(1)))).toBe(first);
    expect(thrown(() => decoder.end())).toBe(first);
  });
});
