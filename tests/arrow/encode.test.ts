/**
 * The encoder against apache-arrow's reader: every row of the ARCHITECTURE.md §5 table, stored in a real
 * SQLite file, read back as the worker reads it (safeIntegers) and decoded with `tableFromIPC`.
 */
import { describe, expect, test } from "bun:test";
import { RecordBatchReader } from "apache-arrow";
import { arrowSchema, createStreamEncoder, encodeRowsToIpc, type EncoderColumn } from "../../src/arrow/encode.ts";
import { arrowKindFor, arrowTypeFor } from "../../src/arrow/types.ts";
import { decode, decodedColumn, encoderColumns, SqlLiteral, storeAndRead, type TestColumn } from "./support.ts";

/** One column per declared type: what it stores, and what apache-arrow must read back. */
function roundTrip(declared: string, stored: unknown[], expected: unknown[], batchSize = 65_536) {
  const columns: TestColumn[] = [{ name: "v", declared }];
  const rows = storeAndRead(columns, stored.map((v) => [v]));
  const table = decode(encodeRowsToIpc(encoderColumns(columns), rows, batchSize));
  expect(String(table.schema.fields[0]?.type)).toBe(String(arrowTypeFor(arrowKindFor(declared))));
  expect(table.numRows).toBe(expected.length);
  return decodedColumn(table, 0);
}

const utc = (y: number, m: number, d: number, h = 0, min = 0, s = 0, ms = 0) => Date.UTC(y, m - 1, d, h, min, s, ms);

describe("schema", () => {
  const declared = ["INTEGER", "BIGINT", "TEXT", "VARCHAR(20)", "CLOB", "BLOB", "REAL", "DOUBLE", "FLOAT", "BOOLEAN", "DATE", "DATETIME", "TIMESTAMP", "NUMERIC", "DECIMAL(10,2)", ""];

  test("each declared type gives the Arrow type of ARCHITECTURE.md §5, with nullability and metadata", () => {
    const columns: EncoderColumn[] = declared.map((d, i) => ({
      name: `c${i}`,
      kind: arrowKindFor(d),
      nullable: i % 2 === 0,
      metadata: { sqlite_type: d, description: `column ${i}` },
    }));
    const table = decode(encodeRowsToIpc(columns, []));
    expect(table.schema.fields.map((f) => f.name)).toEqual(columns.map((c) => c.name));
    table.schema.fields.forEach((field, i) => {
      const expected = arrowTypeFor(columns[i]!.kind);
      expect(field.typeId).toBe(expected.typeId);
      expect(String(field.type)).toBe(String(expected));
      expect(field.nullable).toBe(i % 2 === 0);
      expect(Object.fromEntries(field.metadata)).toEqual({ sqlite_type: declared[i]!, description: `column ${i}` });
    });
    expect(String(arrowSchema(columns).fields[11]?.type)).toBe("Timestamp<MILLISECOND, UTC>");
  });

  test("an empty result is a valid stream with the schema and zero rows", () => {
    const columns: TestColumn[] = [{ name: "id", declared: "INTEGER" }, { name: "name", declared: "TEXT" }];
    const rows = storeAndRead(columns, []);
    expect(rows).toEqual([]);
    const table = decode(encodeRowsToIpc(encoderColumns(columns), rows));
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual(["id:Int64", "name:Utf8"]);
  });
});

describe("values round-trip", () => {
  test("INTEGER → Int64, exact beyond 2^53 and at both ends of the 64-bit range", () => {
    const values = [0n, 1n, -1n, 9007199254740993n, -9007199254740993n, -(2n ** 63n), 2n ** 63n - 1n, null, 42n];
    expect(roundTrip("INTEGER", values, values)).toEqual(values);
  });

  test("TEXT → Utf8: ASCII, empty, unicode (accents, CJK, emoji) in one batch and across batches", () => {
    const values = ["plain", "", "héllo ✓", "日本語のテキスト", "emoji 😀🎉", null, "x".repeat(1000), "tab\tnew\nline"];
    expect(roundTrip("TEXT", values, values)).toEqual(values);
    expect(roundTrip("VARCHAR(20)", values, values, 2)).toEqual(values);
    const ascii = ["a", "", "bc", null, "def"];
    expect(roundTrip("CLOB", ascii, ascii)).toEqual(ascii);
  });

  test("lone surrogates from JavaScript strings become U+FFFD value by value, even when adjacent values would pair", () => {
    const columns: EncoderColumn[] = [{ name: "t", kind: "utf8", nullable: true }];
    const rows = [["\uD800"], ["a\uDC00"], ["\uD83D"], ["\uDE00b"], [null], ["ok"]];
    const decoded = decodedColumn(decode(encodeRowsToIpc(columns, rows)), 0);
    expect(decoded).toEqual(["\uFFFD", "a\uFFFD", "\uFFFD", "\uFFFDb", null, "ok"]);
  });

  test("BLOB → Binary: bytes exact, empty blobs, nulls", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const values = [new Uint8Array([1, 2, 3]), new Uint8Array(0), null, all];
    const decoded = roundTrip("BLOB", values, values);
    expect(decoded.map((v) => (v === null ? null : [...(v as Uint8Array)]))).toEqual(values.map((v) => (v === null ? null : [...v])));
  });

  test("REAL → Float64, including integers stored in a REAL column", () => {
    const stored = [1.5, -0.25, 1e300, 5e-324, Infinity, -Infinity, null, 3n, 0.1 + 0.2];
    const expected = [1.5, -0.25, 1e300, 5e-324, Infinity, -Infinity, null, 3, 0.1 + 0.2];
    expect(roundTrip("REAL", stored, expected)).toEqual(expected);
    expect(roundTrip("DOUBLE PRECISION", [2.5], [2.5])).toEqual([2.5]);
  });

  test("BOOLEAN → Bool from 0/1", () => {
    const stored = [1n, 0n, null, true, false, 1n, 1n, 0n, 1n];
    const expected = [true, false, null, true, false, true, true, false, true];
    expect(roundTrip("BOOLEAN", stored, expected)).toEqual(expected);
  });

  test("DATE → Date32 from ISO text, leap days and dates before 1970", () => {
    const stored = ["2024-02-29", "1970-01-01", "1969-12-31", "2000-02-29", "0001-01-01", "9999-12-31", null];
    const yearOne = new Date(Date.UTC(2000, 0, 1)).setUTCFullYear(1); // Date.UTC maps year 1 to 1901
    const expected = [utc(2024, 2, 29), 0, -86_400_000, utc(2000, 2, 29), yearOne, utc(9999, 12, 31), null];
    expect(roundTrip("DATE", stored, expected)).toEqual(expected);
  });

  test("DATETIME/TIMESTAMP → Timestamp(ms, UTC) from ISO text with offsets and from Unix seconds", () => {
    const stored = [
      "2024-01-01",
      "2024-01-01 10:20",
      "2024-01-01T10:20:30",
      "2024-01-01 10:20:30.5",
      "2024-01-01T10:20:30.123Z",
      "2024-01-01T10:20:30.120000",
      "2024-01-01T10:20:30+05:30",
      "2024-01-01 10:20:30.007-08:00",
      "1969-12-31 23:59:59.999",
      1_700_000_000n,
      -1n,
      1_700_000_000.25,
      null,
    ];
    const expected = [
      utc(2024, 1, 1),
      utc(2024, 1, 1, 10, 20),
      utc(2024, 1, 1, 10, 20, 30),
      utc(2024, 1, 1, 10, 20, 30, 500),
      utc(2024, 1, 1, 10, 20, 30, 123),
      utc(2024, 1, 1, 10, 20, 30, 120),
      utc(2024, 1, 1, 4, 50, 30),
      utc(2024, 1, 1, 18, 20, 30, 7),
      -1,
      1_700_000_000_000,
      -1000,
      1_700_000_000_250,
      null,
    ];
    expect(roundTrip("DATETIME", stored, expected)).toEqual(expected);
    expect(roundTrip("TIMESTAMP", stored, expected, 4)).toEqual(expected);
  });

  test("other declared types → Utf8 with SQLite's text form of numbers (CAST(x AS TEXT))", () => {
    const stored = [42n, 2.5, 1e20, new SqlLiteral("2.0"), "text", 9007199254740993n, 0.1, null, -0.5];
    // Untyped columns keep REAL 2.0 as a REAL; SQLite prints it "2.0" and 1e20 as "1.0e+20".
    const expected = ["42", "2.5", "1.0e+20", "2.0", "text", "9007199254740993", "0.1", null, "-0.5"];
    expect(roundTrip("", stored, expected)).toEqual(expected);
    // NUMERIC affinity stores 2.0 as the INTEGER 2.
    expect(roundTrip("NUMERIC", [new SqlLiteral("2.0"), 2.5, "abc"], ["2", "2.5", "abc"])).toEqual(["2", "2.5", "abc"]);
  });

  test("the text of every number equals what SQLite's CAST(x AS TEXT) gives", () => {
    const reals = [1 / 3, 2 / 3, 123456.789, 1e-7, 1e15, 1e16, 2 ** 53, 1.7976931348623157e308, 299792458.5, -1e-300, 100];
    const columns: TestColumn[] = [{ name: "v", declared: "ANY" }];
    const rows = storeAndRead(columns, [...reals.map((r) => [r]), [123n], [-(2n ** 63n)]]);
    const decoded = decodedColumn(decode(encodeRowsToIpc(encoderColumns(columns), rows)), 0);
    const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
    const oracle = new Database(":memory:", { safeIntegers: true });
    oracle.run("CREATE TABLE n (v ANY)");
    for (const [v] of rows) oracle.query("INSERT INTO n VALUES (?)").run(v as number);
    expect(decoded).toEqual(oracle.query("SELECT CAST(v AS TEXT) FROM n ORDER BY rowid").values().map((r) => r[0]));
  });
});

describe("streaming", () => {
  const columns: TestColumn[] = [
    { name: "id", declared: "INTEGER" },
    { name: "name", declared: "TEXT" },
    { name: "score", declared: "REAL" },
  ];
  const stored = Array.from({ length: 10 }, (_, i) => [BigInt(i), i % 4 === 1 ? null : `n${i}é`, i % 3 === 0 ? null : i / 2]);

  test("batches of 3 give 4 record batches whose values and nulls line up across boundaries", () => {
    const rows = storeAndRead(columns, stored);
    const table = decode(encodeRowsToIpc(encoderColumns(columns), rows, 3));
    expect(table.batches.map((b) => b.numRows)).toEqual([3, 3, 3, 1]);
    expect(decodedColumn(table, 0)).toEqual(stored.map((r) => r[0]));
    expect(decodedColumn(table, 1)).toEqual(stored.map((r) => r[1]));
    expect(decodedColumn(table, 2)).toEqual(stored.map((r) => r[2]));
    expect(table.getChildAt(1)?.nullCount).toBe(stored.filter((r) => r[1] === null).length);
  });

  test("separate messages, each in a buffer of its own, concatenate into a readable stream", () => {
    const rows = storeAndRead(columns, stored);
    const encoder = createStreamEncoder(encoderColumns(columns));
    const messages = [encoder.schemaMessage(), encoder.batchMessage(rows.slice(0, 4), 0), encoder.batchMessage(rows.slice(4), 4), encoder.endMessage()];
    for (const message of messages) {
      // Transferable without a copy: the message owns its whole ArrayBuffer.
      expect(message.byteOffset).toBe(0);
      expect(message.buffer.byteLength).toBe(message.byteLength);
      expect(message.byteLength % 8).toBe(0);
    }
    const stream = new Uint8Array(Buffer.concat(messages));
    const reader = RecordBatchReader.from(stream);
    const batches = [...reader];
    expect(batches.map((b) => b.numRows)).toEqual([4, 6]);
    expect(batches[1]?.getChildAt(1)?.get(0)).toBe("n4é");
    expect(decode(stream).numRows).toBe(10);
  });

  test("an encoder with no batches gives schema + end: zero rows", () => {
    const encoder = createStreamEncoder(encoderColumns(columns));
    const table = decode(new Uint8Array(Buffer.concat([encoder.schemaMessage(), encoder.endMessage()])));
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.length).toBe(3);
  });

  test("a batch with zero rows is valid", () => {
    const encoder = createStreamEncoder(encoderColumns(columns));
    const table = decode(new Uint8Array(Buffer.concat([encoder.schemaMessage(), encoder.batchMessage([], 0), encoder.endMessage()])));
    expect(table.numRows).toBe(0);
  });

  test("batchSize must be a positive integer", () => {
    expect(() => encodeRowsToIpc(encoderColumns(columns), [], 0)).toThrow(RangeError);
  });
});

describe("without safeIntegers", () => {
  test("integral numbers are INTEGERs: exact up to 2^53, text without '.0'", () => {
    const columns: TestColumn[] = [{ name: "i", declared: "INTEGER" }, { name: "u", declared: "" }];
    const rows = storeAndRead(columns, [[5n, 7n], [-(2n ** 53n) + 1n, 2.5]], { safeIntegers: false });
    const table = decode(encodeRowsToIpc(encoderColumns(columns), rows, 10, { safeIntegers: false }));
    expect(decodedColumn(table, 0)).toEqual([5n, -(2n ** 53n) + 1n]);
    expect(decodedColumn(table, 1)).toEqual(["7", "2.5"]);
  });
});
