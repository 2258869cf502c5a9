/**
 * Binary COPY straight into Arrow buffers (src/engines/postgres/copy-arrow.ts): for every kind it
 * takes, the record batches are byte for byte what the Arrow encoder makes of the decoded values
 * (same batches, validity, offsets, NULL slots), whatever the chunk sizes; the values it must
 * refuse are refused with the same column, row and words; kinds it does not take fall back to rows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { tableFromIPC } from "apache-arrow";
import { createStreamEncoder, type EncoderColumn } from "../../../src/arrow/encode.ts";
import { ValueDoesNotFit } from "../../../src/arrow/columns.ts";
import { arrowDirect } from "../../../src/engines/postgres/copy-arrow.ts";
import { BinaryCopyDecoder, type DecodedBatch } from "../../../src/engines/postgres/copy-binary.ts";
import { PgValueRefused } from "../../../src/engines/postgres/value-refusal.ts";
import type { DecodeColumn } from "../../../src/engines/postgres/types.ts";
import { usePostgres } from "../../support/postgres.ts";
import { copyBytes, decodeInChunks, feedDecoder, randomChunkSizes, thrown } from "./support.ts";

const postgres = usePostgres();
let sql: SQL;

/** Every (wire, kind) pair copy-arrow.ts takes, nullable, with values at the edges of the fast paths. */
const COLUMNS: DecodeColumn[] = [
  { name: "i2", type: { kind: "int16" }, wire: "int2" },
  { name: "i4", type: { kind: "int32" }, wire: "int4" },
  { name: "i8", type: { kind: "int64" }, wire: "int8" },
  { name: "f4", type: { kind: "float32" }, wire: "float4" },
  { name: "f8", type: { kind: "float64" }, wire: "float8" },
  { name: "b", type: { kind: "bool" }, wire: "bool" },
  { name: "d", type: { kind: "date32" }, wire: "date" },
  { name: "ts", type: { kind: "timestamp_us" }, wire: "timestamp" },
  { name: "tz", type: { kind: "timestamp_us_utc" }, wire: "timestamp" },
  { name: "t", type: { kind: "utf8" }, wire: "text" },
];
const encoderColumns = (columns: readonly DecodeColumn[], nullable = true): EncoderColumn[] =>
  columns.map((c) => ({ name: c.name, ...c.type, nullable }));

/** 5,000 rows: a NULL in each column every few rows, text ASCII, accented, emoji and 64+ bytes long, timestamps far from 2000. */
const SELECT = `
  SELECT CASE WHEN g % 7 = 0 THEN NULL ELSE (g % 65536 - 32768)::int2 END,
         CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 104729 % 2147483647 - 1073741824)::int4 END,
         CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN -9223372036854775808 WHEN g % 19 = 0 THEN 9223372036854775807 ELSE g::int8 * 1234567890123 END,
         CASE WHEN g % 5 = 0 THEN NULL WHEN g % 23 = 0 THEN 'NaN'::float4 ELSE (g / 3.0)::float4 END,
         CASE WHEN g % 3 = 0 THEN NULL WHEN g % 29 = 0 THEN '-Infinity'::float8 ELSE g / 7.0 END,
         CASE WHEN g % 4 = 0 THEN NULL ELSE g % 2 = 0 END,
         CASE WHEN g % 9 = 0 THEN NULL ELSE date '1900-03-01' + g * 37 END,
         CASE WHEN g % 10 = 0 THEN NULL WHEN g % 31 = 0 THEN timestamp '0001-01-01 00:00:00' + g * interval '1 day' ELSE timestamp '2000-01-01' + g * interval '1.000001 hour' END,
         CASE WHEN g % 8 = 0 THEN NULL WHEN g % 37 = 0 THEN timestamptz '9999-12-31 23:59:59.999999+00' ELSE timestamptz '1970-01-01 00:00:00+00' - g * interval '3 days 1 microsecond' END,
         CASE WHEN g % 6 = 0 THEN NULL WHEN g % 41 = 0 THEN '' WHEN g % 43 = 0 THEN repeat('Été ☃ 😀 ', g % 20) ELSE md5(g::text) || repeat('x', g % 90) END
  FROM generate_series(1, 5000) g`;

beforeAll(async () => {
  sql = new SQL({ url: postgres.url, max: 1 });
});

afterAll(async () => {
  await sql?.close();
});

/** The batches as the Arrow encoder writes them from the decoded values. */
function encodedRows(columns: readonly DecodeColumn[], bytes: Uint8Array, encoder: EncoderColumn[], batchRows: number): Uint8Array[] {
  const stream = createStreamEncoder(encoder);
  return decodeInChunks(columns, bytes, undefined, { batchRows }).batches.map((batch) => stream.batchMessage(batch.rows, batch.firstRowIndex));
}

describe("record batches straight from the COPY", () => {
  test.each([
    ["in one chunk", () => Number.MAX_SAFE_INTEGER],
    ["in chunks of 1 byte to 64 KiB", randomChunkSizes(7)],
    ["in chunks of 1 to 3 bytes", (() => {
      let n = 0;
      return () => 1 + (n++ % 3);
    })()],
  ])("the encoder's bytes, batch by batch, %s", async (_, size) => {
    const bytes = await copyBytes(sql, SELECT);
    const encoder = encoderColumns(COLUMNS);
    expect(arrowDirect(COLUMNS, encoder)).toBe(true);
    const expected = encodedRows(COLUMNS, bytes, encoder, 1_000);
    const { batches } = decodeInChunks(COLUMNS, bytes, size, { batchRows: 1_000, arrow: encoder });
    expect(batches.map((b) => [b.length, b.firstRowIndex, b.rows.length])).toEqual(expected.map((_, i) => [1_000, i * 1_000, 0]));
    expect(batches.map((b) => Buffer.from(b.arrow!).toString("hex"))).toEqual(expected.map((m) => Buffer.from(m).toString("hex")));
  });

  test("the values read back as the decoded rows", async () => {
    const bytes = await copyBytes(sql, SELECT);
    const encoder = encoderColumns(COLUMNS);
    const stream = createStreamEncoder(encoder);
    const { batches } = decodeInChunks(COLUMNS, bytes, undefined, { arrow: encoder });
    const table = tableFromIPC([stream.schemaMessage(), ...batches.map((b) => b.arrow!), stream.endMessage()]);
    const rows = decodeInChunks(COLUMNS, bytes).rows;
    expect(table.numRows).toBe(5_000);
    // Spot checks (the bytes are compared above): NULLs, text with emoji, int64 at its extremes.
    for (const r of [0, 5, 42, 29, 30, 36, 2_000, 4_999]) {
      const row = table.get(r)!.toArray();
      expect(row[9]).toEqual(rows[r]![9]);
      expect(row[2]).toEqual(rows[r]![2]);
    }
  });

  test("a batch also ends at batchMaxBytes of text, as the rows' batches do", async () => {
    const bytes = await copyBytes(sql, SELECT);
    const encoder = encoderColumns(COLUMNS);
    const rows = decodeInChunks(COLUMNS, bytes, undefined, { batchMaxBytes: 20_000 }).batches;
    const direct = decodeInChunks(COLUMNS, bytes, randomChunkSizes(3), { batchMaxBytes: 20_000, arrow: encoder }).batches;
    expect(direct.map((b) => [b.length, b.firstRowIndex, b.wideBytes])).toEqual(rows.map((b) => [b.rows.length, b.firstRowIndex, b.wideBytes]));
  });
});

describe("a decoder used again (reset: a small read's, kept by the engine)", () => {
  const hex = (batches: DecodedBatch[]) => batches.map((b) => [b.length, b.firstRowIndex, b.wideBytes, Buffer.from(b.arrow!).toString("hex")]);

  test("after a stream it read to the end: the next streams decode as a new decoder decodes them", async () => {
    const encoder = encoderColumns(COLUMNS);
    const streams = [
      await copyBytes(sql, `${SELECT} LIMIT 10`),
      await copyBytes(sql, `SELECT * FROM (${SELECT}) s WHERE false`),
      await copyBytes(sql, `${SELECT} OFFSET 100 LIMIT 2500`),
      await copyBytes(sql, `${SELECT} OFFSET 7 LIMIT 3`),
    ];
    const used = new BinaryCopyDecoder(COLUMNS, { arrow: encoder, batchRows: 1_000 });
    for (const [i, bytes] of streams.entries()) {
      const fresh = feedDecoder(new BinaryCopyDecoder(COLUMNS, { arrow: encoder, batchRows: 1_000 }), bytes, randomChunkSizes(i));
      expect(hex(feedDecoder(used, bytes, randomChunkSizes(10 + i)))).toEqual(hex(fresh));
      expect(used.reset(1 << 30)).toBe(true);
    }
  });

  test("given a frame, a stream of one batch comes whole (frame, batch, end in one buffer); of several, as without it", async () => {
    const encoder = encoderColumns(COLUMNS);
    const stream = createStreamEncoder(encoder);
    const frame = { before: stream.schemaMessage(), after: stream.endMessage() };
    const one = await copyBytes(sql, `${SELECT} LIMIT 10`);
    const [whole] = feedDecoder(new BinaryCopyDecoder(COLUMNS, { arrow: encoder, frame }), one, randomChunkSizes(4));
    const [plain] = feedDecoder(new BinaryCopyDecoder(COLUMNS, { arrow: encoder }), one, () => 1 << 20);
    expect(whole!.whole).toBe(true);
    expect(Buffer.from(whole!.arrow!).toString("hex")).toBe(Buffer.concat([frame.before, plain!.arrow!, frame.after]).toString("hex"));
    expect(tableFromIPC(whole!.arrow!).numRows).toBe(10);
    const several = await copyBytes(sql, `${SELECT} LIMIT 2500`);
    const framed = feedDecoder(new BinaryCopyDecoder(COLUMNS, { arrow: encoder, frame, batchRows: 1_000 }), several, () => 1 << 20);
    expect(framed.map((b) => b.whole)).toEqual([undefined, undefined, undefined]);
    expect(hex(framed)).toEqual(hex(feedDecoder(new BinaryCopyDecoder(COLUMNS, { arrow: encoder, batchRows: 1_000 }), several, () => 1 << 20)));
  });

  test("not reset (false, the decoder left as it is) before its end, after a failure, or with buffers past the bound", async () => {
    const encoder = encoderColumns(COLUMNS);
    const bytes = await copyBytes(sql, `${SELECT} LIMIT 50`);
    const unfinished = new BinaryCopyDecoder(COLUMNS, { arrow: encoder });
    unfinished.push(bytes.slice(0, bytes.length - 2));
    expect(unfinished.reset(1 << 30)).toBe(false);
    expect(unfinished.finished).toBe(false);

    const columns: DecodeColumn[] = [{ name: "d", type: { kind: "date32" }, wire: "date" }];
    const failed = new BinaryCopyDecoder(columns, { arrow: encoderColumns(columns) });
    const refused = await copyBytes(sql, "SELECT CASE WHEN g = 3 THEN 'infinity'::date ELSE current_date END FROM generate_series(1, 5) g");
    expect(() => feedDecoder(failed, refused, () => 1 << 20)).toThrow(PgValueRefused);
    expect(failed.reset(1 << 30)).toBe(false);

    const wide = new BinaryCopyDecoder(COLUMNS, { arrow: encoder });
    feedDecoder(wide, await copyBytes(sql, SELECT), () => 65_536);
    expect(wide.reset(16 * 1024)).toBe(false);
    expect(wide.reset(1 << 30)).toBe(true);
  });
});

describe("refused as the values are refused", () => {
  const one = (kind: DecodeColumn["type"]["kind"], wire: DecodeColumn["wire"]): DecodeColumn[] => [
    { name: "id", type: { kind: "int64" }, wire: "int8" },
    { name: "v", type: { kind }, wire },
  ];
  test.each([
    ["timestamp 'infinity'", one("timestamp_us_utc", "timestamp"), "SELECT g::int8, CASE WHEN g = 700 THEN 'infinity'::timestamptz ELSE now() END FROM generate_series(1, 900) g"],
    ["timestamp '-infinity'", one("timestamp_us", "timestamp"), "SELECT g::int8, CASE WHEN g = 700 THEN '-infinity'::timestamp ELSE localtimestamp END FROM generate_series(1, 900) g"],
    ["date 'infinity'", one("date32", "date"), "SELECT g::int8, CASE WHEN g = 700 THEN 'infinity'::date ELSE current_date END FROM generate_series(1, 900) g"],
  ])("%s: the same PgValueRefused, same column, row and message", async (_, columns, select) => {
    const bytes = await copyBytes(sql, select);
    const expected = thrown(() => decodeInChunks(columns, bytes)) as PgValueRefused;
    const found = thrown(() => decodeInChunks(columns, bytes, randomChunkSizes(5), { arrow: encoderColumns(columns) })) as PgValueRefused;
    expect(found).toBeInstanceOf(PgValueRefused);
    expect([found.columnIndex, found.rowIndex, found.message]).toEqual([expected.columnIndex, expected.rowIndex, expected.message]);
    expect(found.rowIndex).toBe(699);
  });

  test("text that is not UTF-8 (an SQL_ASCII database), short and long: refused naming its row", async () => {
    // A real COPY of text, its bytes then made invalid where a SQL_ASCII server would send them unchecked.
    const columns = one("utf8", "text");
    for (const length of [10, 100]) {
      const bytes = await copyBytes(sql, `SELECT g::int8, repeat('a', ${length}) FROM generate_series(1, 50) g`);
      // Row 30's text: find its bytes (the 30th run of 'a's) and put 0xff in it.
      let seen = 0;
      for (let i = 0; i < bytes.length; i++) {
        if (bytes[i] === 0x61 && bytes[i - 1] !== 0x61 && ++seen === 31) {
          bytes[i + 3] = 0xff;
          break;
        }
      }
      const expected = thrown(() => decodeInChunks(columns, bytes)) as PgValueRefused;
      const found = thrown(() => decodeInChunks(columns, bytes, randomChunkSizes(9), { arrow: encoderColumns(columns) })) as PgValueRefused;
      expect(found).toBeInstanceOf(PgValueRefused);
      expect([found.rowIndex, found.message]).toEqual([expected.rowIndex, expected.message]);
      expect(found.rowIndex).toBe(30);
    }
  });

  test("a NULL in a column the encoder holds NOT NULL: the encoder's ValueDoesNotFit (first such column, then row)", async () => {
    const columns = COLUMNS.slice(0, 3);
    const bytes = await copyBytes(sql, "SELECT 1::int2, CASE WHEN g IN (40, 90) THEN NULL ELSE g END::int4, CASE WHEN g = 20 THEN NULL ELSE g END::int8 FROM generate_series(1, 100) g");
    const encoder = encoderColumns(columns, false);
    const stream = createStreamEncoder(encoder);
    const rows = decodeInChunks(columns, bytes).batches;
    const expected = thrown(() => rows.map((b) => stream.batchMessage(b.rows, b.firstRowIndex))) as ValueDoesNotFit;
    const found = thrown(() => decodeInChunks(columns, bytes, undefined, { arrow: encoder })) as ValueDoesNotFit;
    expect(found).toBeInstanceOf(ValueDoesNotFit);
    expect([found.columnIndex, found.rowIndex, found.detail]).toEqual([expected.columnIndex, expected.rowIndex, expected.detail]);
    expect([found.columnIndex, found.rowIndex]).toEqual([1, 39]);
  });
});

describe("kinds it does not take", () => {
  test.each([
    ["numeric → Decimal128", { name: "n", type: { kind: "decimal128", precision: 10, scale: 2 }, wire: "numeric" }],
    ["uuid → Utf8", { name: "u", type: { kind: "utf8" }, wire: "uuid" }],
    ["bytea → Binary", { name: "b", type: { kind: "binary" }, wire: "bytea" }],
    ["jsonb → Utf8", { name: "j", type: { kind: "utf8" }, wire: "jsonb" }],
  ] as [string, DecodeColumn][])("%s: rows of values, as before", (_, column) => {
    const columns = [COLUMNS[2]!, column];
    expect(arrowDirect(columns, encoderColumns(columns))).toBe(false);
  });

  test("refused values asked for (validate's scan): rows of values", async () => {
    const bytes = await copyBytes(sql, "SELECT g::int8 FROM generate_series(1, 10) g");
    const columns = [COLUMNS[2]!];
    const { batches } = decodeInChunks(columns, bytes, undefined, { arrow: encoderColumns(columns), onRefused: () => {} });
    expect(batches[0]!.arrow).toBeUndefined();
    expect(batches[0]!.rows.length).toBe(10);
  });
});
