/**
 * Parquet as an independent reader sees it (parquet-wasm, i.e. arrow-rs; the writer is
 * hyparquet-writer): the types of ARCHITECTURE.md §5, nullability from NOT NULL, exact int64, and row
 * groups written as the rows arrive, so an export never holds the whole result.
 */
import { expect, test } from "bun:test";
import { DataType, Type, type Field } from "apache-arrow";
import { ParquetFile } from "parquet-wasm";
import type { EncoderColumn, Row } from "../../src/arrow/encode.ts";
import { concatBytes, encodeAll } from "../../src/formats/encoder.ts";
import { createParquetEncoder, ROW_GROUP_ROWS } from "../../src/formats/parquet.ts";
import { edgeFixture, readParquetIndependently } from "./support.ts";

const fixture = edgeFixture();

function describeField(field: Field): string {
  const type = field.type as DataType & { unit?: number; timezone?: string | null };
  const name = Type[type.typeId];
  const detail = DataType.isTimestamp(type) ? `(ms=${type.unit === 1}, utc=${type.timezone === "UTC" || type.timezone === "+00:00"})` : "";
  return `${field.name}: ${name}${detail}${field.nullable ? "" : " not null"}`;
}

test("column types are the Arrow types; NOT NULL columns are required", () => {
  const columns: EncoderColumn[] = [
    { name: "i", kind: "int64", nullable: false },
    { name: "f", kind: "float64", nullable: true },
    { name: "s", kind: "utf8", nullable: true },
    { name: "b", kind: "binary", nullable: true },
    { name: "ok", kind: "bool", nullable: true },
    { name: "d", kind: "date32", nullable: false },
    { name: "ts", kind: "timestamp", nullable: true },
  ];
  const rows: Row[] = [[1n, null, null, null, null, "2024-01-01", null]];
  const table = readParquetIndependently(encodeAll(createParquetEncoder(columns), rows));
  expect(table.schema.fields.map(describeField)).toEqual([
    "i: Int not null",
    "f: Float",
    "s: Utf8",
    "b: Binary",
    "ok: Bool",
    "d: Date not null",
    "ts: Timestamp(ms=true, utc=true)",
  ]);
  const [i, f, , , , d] = table.schema.fields.map((field) => field.type as DataType & { bitWidth?: number; precision?: number; unit?: number });
  expect(i!.bitWidth).toBe(64);
  expect(f!.precision).toBe(2); // DOUBLE
  expect(d!.unit).toBe(0); // DAY
});

test("int64 beyond 2^53 and at the limits is exact", () => {
  const values = [2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 0n];
  const columns: EncoderColumn[] = [{ name: "n", kind: "int64", nullable: false }];
  const table = readParquetIndependently(encodeAll(createParquetEncoder(columns), values.map((v) => [v])));
  expect([...table.getChild("n")!]).toEqual(values);
});

test("row groups are written as rows arrive: the end holds only the footer", async () => {
  const columns: EncoderColumn[] = [
    { name: "id", kind: "int64", nullable: false },
    { name: "ts", kind: "timestamp", nullable: false },
    { name: "address", kind: "utf8", nullable: false },
    { name: "amount", kind: "float64", nullable: true },
  ];
  const total = 3 * ROW_GROUP_ROWS + 1000;
  const rows: Row[] = Array.from({ length: total }, (_, i) => ({
    id: BigInt(i),
    ts: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    address: `0x${(i * 2_654_435_761).toString(16).padStart(40, "0")}`,
    amount: i % 10 === 0 ? null : i / 100,
  }));
  const encoder = createParquetEncoder(columns);
  const pieces = [encoder.head()];
  const sizes: number[] = [];
  for (let first = 0; first < total; first += 4096) {
    const piece = encoder.batch(rows.slice(first, first + 4096), first);
    sizes.push(piece.byteLength);
    pieces.push(piece);
  }
  const end = encoder.end();
  pieces.push(end);
  // A row group goes out with every fourth 4,096-row batch; the others wait for it.
  expect(sizes.map((size) => size > 0)).toEqual(Array.from({ length: sizes.length }, (_, i) => i % 4 === 3 && i < 12));
  const file = concatBytes(pieces);
  const metadata = (await ParquetFile.fromFile(new Blob([file as BlobPart]))).metadata();
  expect(metadata.rowGroups().map((group) => group.numRows())).toEqual([ROW_GROUP_ROWS, ROW_GROUP_ROWS, ROW_GROUP_ROWS, 1000]);
  const table = readParquetIndependently(file);
  expect(table.numRows).toBe(total);
  expect(table.getChild("id")!.get(total - 1)).toBe(BigInt(total - 1));
  expect(table.getChild("amount")!.get(10)).toBeNull();
  // The last, partial row group and the footer: a small part of the file.
  expect(end.byteLength).toBeLessThan(file.byteLength / 3);
});

test("a row group also ends at 8 MiB of values: 100 KB texts are not held 16,384 rows at a time", async () => {
  const columns: EncoderColumn[] = [{ name: "body", kind: "utf8", nullable: false }];
  const encoder = createParquetEncoder(columns);
  const pieces = [encoder.head()];
  for (let first = 0; first < 400; first += 50) {
    pieces.push(encoder.batch(Array.from({ length: 50 }, (_, i) => ({ body: String.fromCharCode(97 + ((first + i) % 26)).repeat(100_000) })), first));
  }
  pieces.push(encoder.end());
  const file = concatBytes(pieces);
  const groups = (await ParquetFile.fromFile(new Blob([file as BlobPart]))).metadata().rowGroups().map((group) => group.numRows());
  // 8 MiB is ~84 such rows: a group goes out with the batch that passes it (100 rows), the rest at the end.
  expect(groups).toEqual([100, 100, 100, 100]);
  expect(readParquetIndependently(file).getChild("body")!.get(399)).toBe("j".repeat(100_000));
});

test("rows of 4 MB texts are not held until the footer: text columns carry no min/max statistics", async () => {
  const columns: EncoderColumn[] = [{ name: "id", kind: "int64", nullable: false }, { name: "body", kind: "utf8", nullable: false }];
  const encoder = createParquetEncoder(columns);
  const pieces = [encoder.head()];
  const row = (i: number) => ({ id: BigInt(i), body: String.fromCharCode(97 + (i % 26)).repeat(4 << 20) });
  Bun.gc(true);
  const before = process.memoryUsage().heapUsed;
  // 40 rows of 4 MiB: a row group every two rows, 160 MiB of text in all (a few KB compressed).
  for (let i = 0; i < 40; i++) pieces.push(encoder.batch([row(i)], i));
  Bun.gc(true);
  const held = process.memoryUsage().heapUsed - before;
  pieces.push(encoder.end());
  // Before, every value stayed referenced as its row group's min or max: ~160 MiB.
  expect(held).toBeLessThan(40 << 20);
  const file = concatBytes(pieces);
  const table = readParquetIndependently(file);
  expect(table.numRows).toBe(40);
  expect(table.getChild("body")!.get(39)).toBe("n".repeat(4 << 20));
});
