/**
 * The exact text of each value in the text formats (README "Output formats"): one table per column
 * kind, value as bun:sqlite returns it → CSV field, JSON value. NDJSON writes the JSON values.
 */
import { describe, expect, test } from "bun:test";
import type { EncoderColumn } from "../../src/arrow/encode.ts";
import type { ArrowKind } from "../../src/arrow/types.ts";
import { createCsvEncoder } from "../../src/formats/csv.ts";
import { encodeAll } from "../../src/formats/encoder.ts";
import { createJsonEncoder, createNdjsonEncoder } from "../../src/formats/json.ts";

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** [kind, value, CSV field, JSON value text] */
const cases: [ArrowKind, unknown, string, string][] = [
  ["int64", 0n, "0", "0"],
  // JSON: a number while it is a safe integer, its exact digits as a string beyond (DESIGN §16).
  ["int64", -(2n ** 63n), "-9223372036854775808", '"-9223372036854775808"'],
  ["int64", 2n ** 63n - 1n, "9223372036854775807", '"9223372036854775807"'],
  ["int64", 2n ** 53n + 1n, "9007199254740993", '"9007199254740993"'],
  ["int64", 2n ** 53n, "9007199254740992", '"9007199254740992"'], // 2^53 + 1 would read back as it
  ["int64", 3.0, "3", "3"], // an integral REAL fits int64
  ["float64", 0.1, "0.1", "0.1"],
  ["float64", 1 / 3, "0.3333333333333333", "0.3333333333333333"],
  ["float64", 123, "123", "123"],
  ["float64", -0, "-0", "-0"],
  ["float64", 1e21, "1e+21", "1e+21"],
  ["float64", 5e-324, "5e-324", "5e-324"],
  ["float64", Infinity, "Infinity", "1e999"],
  ["float64", -Infinity, "-Infinity", "-1e999"],
  ["float64", 2n ** 53n, "9007199254740992", "9007199254740992"], // an INTEGER that is an exact double
  ["utf8", "plain", "plain", '"plain"'],
  ["utf8", "", '""', '""'],
  ["utf8", "a,b", '"a,b"', '"a,b"'],
  ["utf8", 'say "hi"', '"say ""hi"""', '"say \\"hi\\""'],
  ["utf8", "two\nlines", '"two\nlines"', '"two\\nlines"'],
  ["utf8", "cr\r", '"cr\r"', '"cr\\r"'],
  ["utf8", " padded ", " padded ", '" padded "'],
  ["utf8", "=1+2", "=1+2", '"=1+2"'],
  ["utf8", "héllo 🌍", "héllo 🌍", '"héllo 🌍"'],
  ["utf8", "\u0000\u001f", "\u0000\u001f", '"\\u0000\\u001f"'],
  ["utf8", "back\\slash", "back\\slash", '"back\\\\slash"'],
  ["utf8", "lone \ud800", "lone \ufffd", '"lone \\ud800"'], // UTF-8 has no lone surrogates: U+FFFD in bytes, as in Arrow; JSON escapes it
  ["utf8", 42n, "42", '"42"'], // an INTEGER in a text column: SQLite's text of it
  ["utf8", 2.0, "2.0", '"2.0"'], // a REAL: SQLite's text, not JavaScript's
  ["binary", new Uint8Array([0xfb, 0xff]), "+/8=", '"+/8="'],
  ["binary", new Uint8Array(0), '""', '""'],
  ["bool", 1n, "true", "true"],
  ["bool", 0n, "false", "false"],
  ["date32", "2024-02-29", "2024-02-29", '"2024-02-29"'],
  ["date32", "0001-01-01", "0001-01-01", '"0001-01-01"'],
  ["timestamp", "2024-01-01 10:00", "2024-01-01T10:00:00.000Z", '"2024-01-01T10:00:00.000Z"'],
  ["timestamp", "2024-01-01 23:59:59", "2024-01-01T23:59:59.000Z", '"2024-01-01T23:59:59.000Z"'],
  ["timestamp", "2024-01-01t00:00:01", "2024-01-01T00:00:01.000Z", '"2024-01-01T00:00:01.000Z"'],
  ["timestamp", "2024-01-01T10:00Z", "2024-01-01T10:00:00.000Z", '"2024-01-01T10:00:00.000Z"'],
  ["timestamp", "2024-01-01T10:00:00.5+01:00", "2024-01-01T09:00:00.500Z", '"2024-01-01T09:00:00.500Z"'],
  ["timestamp", "1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z", '"1969-12-31T23:59:59.999Z"'],
  ["timestamp", 1_700_000_000n, "2023-11-14T22:13:20.000Z", '"2023-11-14T22:13:20.000Z"'],
  ["timestamp", 1_700_000_000.25, "2023-11-14T22:13:20.250Z", '"2023-11-14T22:13:20.250Z"'],
  ["timestamp", 9_223_372_036_854_775n, "+292278994-08-17T07:12:55.000Z", '"+292278994-08-17T07:12:55.000Z"'],
];

describe.each(cases)("%s %p", (kind, value, csvField, jsonValue) => {
  const columns: EncoderColumn[] = [
    { name: "id", kind: "int64", nullable: false },
    { name: "v", kind, nullable: true },
  ];
  const rows = [[7n, value]];

  test("CSV", () => {
    expect(decode(encodeAll(createCsvEncoder(columns), rows))).toBe(`id,v\r\n7,${csvField}\r\n`);
  });
  test("JSON", () => {
    expect(decode(encodeAll(createJsonEncoder(columns), rows))).toBe(`[\n{"id":7,"v":${jsonValue}}\n]\n`);
  });
  test("NDJSON", () => {
    expect(decode(encodeAll(createNdjsonEncoder(columns), rows))).toBe(`{"id":7,"v":${jsonValue}}\n`);
  });
});

describe("documents", () => {
  const columns: EncoderColumn[] = [
    { name: "n", kind: "int64", nullable: true },
    { name: "needs, quoting", kind: "utf8", nullable: true },
  ];
  const rows = [
    [1n, "a"],
    [null, null],
    [3n, ""],
  ];

  test("CSV: header, CRLF after every line, NULL an empty field, empty text a quoted one", () => {
    expect(decode(encodeAll(createCsvEncoder(columns), rows, 2))).toBe('n,"needs, quoting"\r\n1,a\r\n,\r\n3,""\r\n');
    expect(decode(encodeAll(createCsvEncoder(columns), []))).toBe('n,"needs, quoting"\r\n');
  });

  test("JSON: an array of objects, one per line, across batches", () => {
    expect(decode(encodeAll(createJsonEncoder(columns), rows, 2))).toBe(
      '[\n{"n":1,"needs, quoting":"a"},\n{"n":null,"needs, quoting":null},\n{"n":3,"needs, quoting":""}\n]\n',
    );
    expect(decode(encodeAll(createJsonEncoder(columns), []))).toBe("[]\n");
  });

  test("NDJSON: one object per line; an empty result is an empty body", () => {
    expect(decode(encodeAll(createNdjsonEncoder(columns), rows, 1))).toBe(
      '{"n":1,"needs, quoting":"a"}\n{"n":null,"needs, quoting":null}\n{"n":3,"needs, quoting":""}\n',
    );
    expect(encodeAll(createNdjsonEncoder(columns), []).byteLength).toBe(0);
  });

  test("every JSON line parses as JSON", () => {
    const text = decode(encodeAll(createJsonEncoder(columns), rows));
    expect(JSON.parse(text)).toEqual([
      { n: 1, "needs, quoting": "a" },
      { n: null, "needs, quoting": null },
      { n: 3, "needs, quoting": "" },
    ]);
  });
});
