/**
 * Every format carries the same rows (ARCHITECTURE.md §13): edge values of every kind stored in a real
 * SQLite file (int64 min/max, 2^53 ± 1, ±Infinity, NULL in every column, unicode, quotes, commas
 * and line breaks, empty text and blobs, timestamps from offsets and Unix seconds) are encoded,
 * read back by an independent reader, and compared cell by cell with values computed here from the
 * SQLite rows.
 */
import { describe, expect, test } from "bun:test";
import { tableFromIPC, type Table } from "apache-arrow";
import type { EncoderColumn, Row } from "../../src/arrow/encode.ts";
import { encodeAll } from "../../src/formats/encoder.ts";
import { formatNamed, type FormatName } from "../../src/formats/registry.ts";
import {
  canonicalFromArrow,
  canonicalFromText,
  edgeFixture,
  expectedRows,
  parseCsv,
  parseJsonExact,
  readParquetIndependently,
  readRows,
  sqliteFile,
  columnsOf,
  type Canonical,
} from "./support.ts";

const fixture = edgeFixture();
const expected = expectedRows(fixture.columns, fixture.rows, fixture.rowKeys);
const text = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(bytes);

/** Each format's bytes → canonical rows, by a reader that is not the encoder. */
const readBack: Record<FormatName, (bytes: Uint8Array, columns: EncoderColumn[]) => Canonical[][]> = {
  arrow: (bytes, columns) => arrowRows(tableFromIPC(bytes), columns),
  parquet: (bytes, columns) => arrowRows(readParquetIndependently(bytes), columns),
  csv(bytes, columns) {
    const [header, ...records] = parseCsv(text(bytes));
    expect(header).toEqual(columns.map((c) => c.name));
    return records.map((record) => columns.map((column, c) => canonicalFromText(column.kind, record[c] ?? null)));
  },
  json(bytes, columns) {
    const parsed = parseJsonExact(text(bytes)) as Record<string, unknown>[];
    expect(Array.isArray(parsed)).toBe(true);
    return parsed.map((object) => objectRow(object, columns));
  },
  ndjson(bytes, columns) {
    const body = text(bytes);
    if (body === "") return [];
    expect(body.endsWith("\n")).toBe(true);
    return body
      .slice(0, -1)
      .split("\n")
      .map((line) => objectRow(parseJsonExact(line) as Record<string, unknown>, columns));
  },
};

function objectRow(object: Record<string, unknown>, columns: EncoderColumn[]): Canonical[] {
  expect(Object.keys(object)).toEqual(columns.map((c) => c.name));
  return columns.map((column) => canonicalFromText(column.kind, object[column.name]));
}

function arrowRows(table: Table, columns: EncoderColumn[]): Canonical[][] {
  expect(table.schema.fields.map((f) => f.name)).toEqual(columns.map((c) => c.name));
  return Array.from({ length: table.numRows }, (_, r) => columns.map((column, c) => canonicalFromArrow(column.kind, table.getChildAt(c)!.get(r))));
}

const NAMES: FormatName[] = ["arrow", "csv", "json", "ndjson", "parquet"];

describe.each(NAMES)("%s", (name) => {
  const format = formatNamed(name)!;

  test("edge rows read back as stored, in batches that split the result", () => {
    for (const batchSize of [1, 4, 100]) {
      const bytes = encodeAll(format.create(fixture.columns, { rowKeys: fixture.rowKeys }), fixture.rows, batchSize);
      expect(readBack[name](bytes, fixture.columns)).toEqual(expected);
    }
  });

  test("array rows (stmt.values()) give the same bytes as object rows", () => {
    const arrays = fixture.rows.map((row) => fixture.rowKeys.map((key) => (row as Record<string, unknown>)[key])) as Row[];
    const fromObjects = encodeAll(format.create(fixture.columns, { rowKeys: fixture.rowKeys }), fixture.rows, 4);
    expect(encodeAll(format.create(fixture.columns), arrays, 4)).toEqual(fromObjects);
  });

  test("an empty result is a valid document with the columns and no rows", () => {
    const bytes = encodeAll(format.create(fixture.columns), []);
    expect(readBack[name](bytes, fixture.columns)).toEqual([]);
  });

  test("aliases read as the output names bun:sqlite gives", () => {
    const path = sqliteFile(["CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (1, 'x'), (NULL, 'y')"]);
    const { rows, rowKeys } = readRows(path, 'SELECT b AS "first, quoted", a AS "ünï ""code""" FROM t');
    const declared = columnsOf(path, "t");
    const columns = [
      { ...declared[1]!, name: "first, quoted" },
      { ...declared[0]!, name: 'ünï "code"' },
    ];
    const bytes = encodeAll(format.create(columns, { rowKeys }), rows);
    expect(readBack[name](bytes, columns)).toEqual([
      ["x", 1n],
      ["y", null],
    ]);
  });

  test("every piece owns its whole buffer, so a worker can transfer it", () => {
    const encoder = format.create(fixture.columns, { rowKeys: fixture.rowKeys });
    const pieces = [encoder.head(), encoder.batch(fixture.rows.slice(0, 4), 0), encoder.batch(fixture.rows.slice(4), 4), encoder.end()];
    for (const piece of pieces) {
      expect(piece.byteOffset).toBe(0);
      expect(piece.byteLength).toBe(piece.buffer.byteLength);
    }
  });
});
