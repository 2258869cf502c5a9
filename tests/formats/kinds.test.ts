/**
 * The other engines' column kinds in every format (DESIGN §14, README "Output formats"): each
 * kind × each format, NULL and the extremes among the values, nested lists and structs, read back by a reader
 * that is not the encoder (apache-arrow, parquet-wasm, an RFC 4180 parser, the exact JSON text) and
 * compared with what tests/arrow/kind-cases.ts writes out; the Parquet annotations as hyparquet
 * reads them; and the same misfits refused by every format.
 */
import { describe, expect, test } from "bun:test";
import { tableFromIPC, type Table } from "apache-arrow";
import { parquetMetadata } from "hyparquet";
import { createStreamEncoder, ValueDoesNotFit, type EncoderColumn, type Row } from "../../src/arrow/encode.ts";
import type { ColumnType } from "../../src/arrow/types.ts";
import { encodeAll } from "../../src/formats/encoder.ts";
import { createParquetEncoder } from "../../src/formats/parquet.ts";
import { FORMATS, formatNamed, type FormatName } from "../../src/formats/registry.ts";
import { decodedValues, KIND_CASES, KIND_MISFITS, type Decoded, type KindCase } from "../arrow/kind-cases.ts";
import { parseCsv, readParquetIndependently } from "./support.ts";

const NAMES: FormatName[] = ["arrow", "csv", "json", "ndjson", "parquet"];
const text = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(bytes);

/** A readable Arrow type: parquet-wasm may name the UTC zone "+00:00". */
const typeText = (table: Table, c: number) => String(table.schema.fields[c]!.type).replace("+00:00", "UTC");

/** Each format's bytes of `id` and `v` columns, checked against the case by an independent reader. */
const check: Record<FormatName, (bytes: Uint8Array, kase: KindCase) => void> = {
  arrow(bytes, { arrowType, decoded }) {
    const table = tableFromIPC(bytes);
    expect(typeText(table, 1)).toBe(arrowType);
    expect(decodedValues(table, 1)).toEqual(decoded);
  },
  parquet(bytes, { arrowType, decoded }) {
    const table = readParquetIndependently(bytes);
    expect(typeText(table, 1)).toBe(arrowType);
    expect(decodedValues(table, 1)).toEqual(decoded);
  },
  csv(bytes, { csv }) {
    const [header, ...records] = parseCsv(text(bytes));
    expect(header).toEqual(["id", "v"]);
    expect(records.map((record) => record[0])).toEqual(csv.map((_, i) => String(i)));
    expect(records.map((record) => record[1])).toEqual(csv);
  },
  json(bytes, { json }) {
    const body = text(bytes);
    expect(body).toBe(`[\n${json.map((value, i) => `{"id":${i},"v":${value}}`).join(",\n")}\n]\n`);
    expect(() => JSON.parse(body)).not.toThrow();
  },
  ndjson(bytes, { json }) {
    const body = text(bytes);
    expect(body).toBe(json.map((value, i) => `{"id":${i},"v":${value}}\n`).join(""));
    for (const line of body.slice(0, -1).split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  },
};

describe.each(KIND_CASES)("$name", (kase) => {
  const columns: EncoderColumn[] = [
    { name: "id", kind: "int32", nullable: false },
    { name: "v", ...kase.type, nullable: true },
  ];

  test.each(NAMES)("%s: every value read back as it was handed over, in batches of 3", (name) => {
    const rows: Row[] = kase.values.map((value, i) => ({ id: i, v: value }));
    check[name](encodeAll(formatNamed(name)!.create(columns), rows, 3), kase);
  });
});

describe("every kind in one result", () => {
  const columns: EncoderColumn[] = KIND_CASES.map(({ type }, c) => ({ name: `c${c}`, ...type, nullable: true }));
  const rowCount = Math.max(...KIND_CASES.map(({ values }) => values.length)) * 2;
  const rows: Row[] = Array.from({ length: rowCount }, (_, r) => KIND_CASES.map(({ values }) => values[r % values.length]));
  const expected = (c: number): Decoded[] => Array.from({ length: rowCount }, (_, r) => KIND_CASES[c]!.decoded[r % KIND_CASES[c]!.decoded.length]!);

  test("Parquet in row groups of 4: parquet-wasm reads what apache-arrow reads from the Arrow stream", () => {
    const parquet = readParquetIndependently(encodeAll(createParquetEncoder(columns, {}, 4), rows, 3));
    const arrow = tableFromIPC(encodeAll(formatNamed("arrow")!.create(columns), rows, 5));
    columns.forEach((_, c) => {
      expect(typeText(parquet, c)).toBe(KIND_CASES[c]!.arrowType);
      expect(decodedValues(parquet, c)).toEqual(expected(c));
      expect(decodedValues(arrow, c)).toEqual(expected(c));
    });
  });

  test.each(NAMES)("%s: an empty result is a valid document with the columns", (name) => {
    const bytes = encodeAll(formatNamed(name)!.create(columns), []);
    if (name === "arrow" || name === "parquet") {
      const table = name === "arrow" ? tableFromIPC(bytes) : readParquetIndependently(bytes);
      expect(table.numRows).toBe(0);
      expect(columns.map((_, c) => typeText(table, c))).toEqual(KIND_CASES.map(({ arrowType }) => arrowType));
    } else {
      expect(text(bytes)).toBe({ csv: `${columns.map((c) => c.name).join(",")}\r\n`, json: "[]\n", ndjson: "" }[name]);
    }
  });
});

/** A Parquet schema element as hyparquet reads it from the footer, with only the annotations that matter. */
function annotations(element: Record<string, unknown>) {
  const { name, type, type_length, repetition_type, converted_type, precision, scale, logical_type, num_children } = element;
  return Object.fromEntries(
    Object.entries({ name, type, type_length, repetition_type, converted_type, precision, scale, logical_type, num_children }).filter(([, v]) => v !== undefined),
  );
}

const decimal = (precision: number, scale: number) => ({
  converted_type: "DECIMAL",
  precision,
  scale,
  logical_type: { type: "DECIMAL", precision, scale },
});

describe("Parquet annotations, as a reader finds them in the footer", () => {
  test.each([
    [{ kind: "int16" }, [{ type: "INT32", converted_type: "INT_16" }]],
    [{ kind: "int32" }, [{ type: "INT32", converted_type: "INT_32" }]],
    [{ kind: "float32" }, [{ type: "FLOAT" }]],
    [{ kind: "decimal128", precision: 9, scale: 2 }, [{ type: "INT32", ...decimal(9, 2) }]],
    [{ kind: "decimal128", precision: 18, scale: 6 }, [{ type: "INT64", ...decimal(18, 6) }]],
    [{ kind: "decimal128", precision: 19, scale: 0 }, [{ type: "FIXED_LEN_BYTE_ARRAY", type_length: 9, ...decimal(19, 0) }]],
    [{ kind: "decimal128", precision: 38, scale: 10 }, [{ type: "FIXED_LEN_BYTE_ARRAY", type_length: 16, ...decimal(38, 10) }]],
    // A wall-clock time is not adjusted to UTC, so it has no TIMESTAMP_MICROS converted type.
    [{ kind: "timestamp_us" }, [{ type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: false, unit: "MICROS" } }]],
    [{ kind: "timestamp_us_utc" }, [{ type: "INT64", converted_type: "TIMESTAMP_MICROS", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" } }]],
    [
      { kind: "list", child: { kind: "int32" } },
      [
        { converted_type: "LIST", logical_type: { type: "LIST" }, num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", repetition_type: "OPTIONAL", type: "INT32", converted_type: "INT_32" },
      ],
    ],
    [
      { kind: "list", child: { kind: "list", child: { kind: "utf8" } } },
      [
        { converted_type: "LIST", logical_type: { type: "LIST" }, num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", repetition_type: "OPTIONAL", converted_type: "LIST", logical_type: { type: "LIST" }, num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", repetition_type: "OPTIONAL", type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } },
      ],
    ],
    [
      // A group of optional members, nested as it is nested.
      { kind: "struct", fields: [{ name: "a", type: { kind: "int64" } }, { name: "s", type: { kind: "struct", fields: [{ name: "l", type: { kind: "list", child: { kind: "utf8" } } }] } }] },
      [
        { num_children: 2 },
        { name: "a", repetition_type: "OPTIONAL", type: "INT64" },
        { name: "s", repetition_type: "OPTIONAL", num_children: 1 },
        { name: "l", repetition_type: "OPTIONAL", converted_type: "LIST", logical_type: { type: "LIST" }, num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", repetition_type: "OPTIONAL", type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } },
      ],
    ],
  ] as [ColumnType, Record<string, unknown>[]][])("%o", (type, elements) => {
    const bytes = encodeAll(createParquetEncoder([{ name: "v", ...type, nullable: false }]), []);
    const schema = parquetMetadata(bytes.buffer as ArrayBuffer).schema.slice(1).map((element) => annotations(element as unknown as Record<string, unknown>));
    expect(schema).toEqual(elements.map((element, i) => ({ ...(i === 0 ? { name: "v", repetition_type: "REQUIRED" } : {}), ...element })));
  });
});

function thrown(action: () => unknown): ValueDoesNotFit | null {
  try {
    action();
  } catch (error) {
    if (error instanceof ValueDoesNotFit) return error;
    throw error;
  }
  return null;
}

const failure = (e: ValueDoesNotFit | null) => e && { column: e.columnIndex, row: e.rowIndex, detail: e.detail };

describe.each(FORMATS.map((format) => [format.name, format] as const))("%s refuses what Arrow refuses", (_, format) => {
  test.each(KIND_MISFITS)("%o: %p", (type, value, detail) => {
    const columns: EncoderColumn[] = [
      { name: "ok", kind: "int16", nullable: false },
      { name: "v", ...type, nullable: true },
    ];
    const rows: Row[] = [
      [1, null],
      [2, null],
      [3, value],
      [4, null],
    ];
    const arrow = thrown(() => createStreamEncoder(columns).batchMessage(rows, 10));
    expect(failure(arrow)).toEqual({ column: 1, row: 12, detail });
    const encoder = format.create(columns);
    encoder.head();
    expect(failure(thrown(() => encoder.batch(rows, 10)))).toEqual(failure(arrow));
  });
});
