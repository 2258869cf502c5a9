/**
 * The other engines' column kinds through the Arrow encoder (DESIGN §14, arrow/types.ts): each kind's values,
 * NULL and the extremes among them, decoded by apache-arrow from the stream's buffers
 * (kind-cases.ts), whole and in batches that split lists; and every value that does not fit its
 * kind refused with ValueDoesNotFit, never changed.
 */
import { describe, expect, test } from "bun:test";
import { tableFromIPC, type Field } from "apache-arrow";
import { arrowSchema, createStreamEncoder, encodeRowsToIpc, fitProblem, ValueDoesNotFit, type EncoderColumn, type Row } from "../../src/arrow/encode.ts";
import { arrowTypeFor, type ColumnType } from "../../src/arrow/types.ts";
import type { ColumnInfo } from "../../src/catalog.ts";
import { encoderColumns, type ValidatedQuery } from "../../src/sql/validated.ts";
import { decodedValues, KIND_CASES, KIND_MISFITS } from "./kind-cases.ts";

function thrown(action: () => unknown): ValueDoesNotFit {
  try {
    action();
  } catch (error) {
    if (error instanceof ValueDoesNotFit) return error;
    throw error;
  }
  throw new Error("expected ValueDoesNotFit, nothing was thrown");
}

describe.each(KIND_CASES)("$name", ({ type, arrowType, values, decoded }) => {
  const columns: EncoderColumn[] = [
    { name: "id", kind: "int32", nullable: false },
    { name: "v", ...type, nullable: true },
  ];
  const rows: Row[] = values.map((value, i) => [i, value]);

  test("its Arrow type, and the values apache-arrow decodes from the buffers", () => {
    const table = tableFromIPC(encodeRowsToIpc(columns, rows));
    expect(String(table.schema.fields[1]!.type)).toBe(arrowType);
    expect(String(arrowTypeFor(type))).toBe(arrowType);
    expect(table.numRows).toBe(values.length);
    expect(decodedValues(table, 1)).toEqual(decoded);
    expect(table.getChildAt(1)!.nullCount).toBe(values.filter((value) => value === null).length);
    expect(decodedValues(table, 0)).toEqual(values.map((_, i) => i));
  });

  test("in batches of 2, from object rows: the same values, and the same bytes as array rows", () => {
    const objects: Row[] = values.map((value, i) => ({ id: i, v: value }));
    const stream = encodeRowsToIpc(columns, objects, 2);
    const table = tableFromIPC(stream);
    expect(table.batches.map((batch) => batch.numRows)).toEqual(values.map((_, i) => i).filter((i) => i % 2 === 0).map((i) => Math.min(2, values.length - i)));
    expect(decodedValues(table, 1)).toEqual(decoded);
    expect(stream).toEqual(encodeRowsToIpc(columns, rows, 2));
  });

  test("a NOT NULL column holds the same values without a validity bitmap", () => {
    const present = values.flatMap((value, i) => (value === null ? [] : [[value, decoded[i]!] as const]));
    const table = tableFromIPC(encodeRowsToIpc([{ name: "v", ...type, nullable: false }], present.map(([value]) => [value])));
    expect(table.schema.fields[0]!.nullable).toBe(false);
    expect(decodedValues(table, 0)).toEqual(present.map(([, expected]) => expected));
  });
});

test("a list's elements are a nullable field named item, as Arrow writers name it", () => {
  const table = tableFromIPC(encodeRowsToIpc([{ name: "l", kind: "list", child: { kind: "list", child: { kind: "utf8" } }, nullable: true }], [[[["a"]]]]));
  const element = table.schema.fields[0]!.type.children[0]!;
  expect([element.name, element.nullable, String(element.type)]).toEqual(["item", true, "List<Utf8>"]);
  expect([element.type.children[0]!.name, element.type.children[0]!.nullable]).toEqual(["item", true]);
});

test("a struct's members are nullable fields named as the members, in order, nested as declared", () => {
  const type: ColumnType = { kind: "struct", fields: [{ name: "b", type: { kind: "list", child: { kind: "struct", fields: [{ name: "x", type: { kind: "utf8" } }] } } }, { name: "a", type: { kind: "int16" } }] };
  const table = tableFromIPC(encodeRowsToIpc([{ name: "s", ...type, nullable: false }], [[{ b: [{ x: "p" }], a: 1 }]]));
  const members = table.schema.fields[0]!.type.children;
  expect(members.map((field: Field) => [field.name, field.nullable, String(field.type)])).toEqual([
    ["b", true, "List<Struct<{x:Utf8}>>"],
    ["a", true, "Int16"],
  ]);
  expect(table.getChildAt(0)!.get(0)!.toJSON()).toEqual({ b: expect.anything(), a: 1 });
});

test("a NULL struct has a null in its own bitmap and in every member's, each member's null count kept", () => {
  const columns: EncoderColumn[] = [{ name: "s", kind: "struct", fields: [{ name: "a", type: { kind: "int32" } }, { name: "b", type: { kind: "utf8" } }], nullable: true }];
  const table = tableFromIPC(encodeRowsToIpc(columns, [[{ a: 1, b: null }], [null], [{ a: null, b: "x" }]]));
  const struct = table.getChildAt(0)!;
  expect([struct.nullCount, struct.isValid(0), struct.isValid(1), struct.isValid(2)]).toEqual([1, true, false, true]);
  const [a, b] = [struct.getChildAt(0)!, struct.getChildAt(1)!];
  expect([0, 1, 2].map((i) => [a.isValid(i), b.isValid(i)])).toEqual([
    [true, false],
    [false, false],
    [false, true],
  ]);
  expect([a.nullCount, b.nullCount]).toEqual([2, 2]);
});

describe("values that do not fit their kind", () => {
  test.each(KIND_MISFITS)("%o: %p is refused: %s", (type, value, detail) => {
    const error = thrown(() => encodeRowsToIpc([{ name: "v", ...type, nullable: true }], [[null], [value], [null]]));
    expect([error.columnIndex, error.rowIndex, error.detail]).toEqual([0, 1, detail]);
    expect(fitProblem(type, value)).toBe(detail);
  });

  test("NULL in a NOT NULL column of each kind", () => {
    for (const { type, values } of KIND_CASES) {
      const present = values.find((value) => value !== null);
      const error = thrown(() => encodeRowsToIpc([{ name: "v", ...type, nullable: false }], [[present], [null]]));
      expect([error.rowIndex, error.detail]).toEqual([1, "NULL in a column declared NOT NULL"]);
    }
  });

  test("a list column names its first misfit by row, though elements are written after the rows are read", () => {
    const columns: EncoderColumn[] = [
      { name: "l", kind: "list", child: { kind: "int16" }, nullable: true },
      { name: "s", kind: "utf8", nullable: true },
    ];
    // Row 1's element is found when the child is written, rows 2 and 0 while the batch is sized.
    const rows: Row[] = [
      [[1], new Uint8Array(1)],
      [[2, 40_000], "x"],
      ["x", "y"],
    ];
    const error = thrown(() => createStreamEncoder(columns).batchMessage(rows, 100));
    expect([error.columnIndex, error.rowIndex, error.detail]).toEqual([0, 101, "list element 1: number 40000 is outside the 16-bit integer range"]);
  });

  test("a struct column names its first misfit by row and member, though members are written after the rows are read", () => {
    const columns: EncoderColumn[] = [
      { name: "s", kind: "struct", fields: [{ name: "a", type: { kind: "int16" } }, { name: "b", type: { kind: "utf8" } }], nullable: true },
      { name: "t", kind: "utf8", nullable: true },
    ];
    const rows: Row[] = [
      [{ a: 1, b: "x" }, new Uint8Array(1)],
      [{ a: 40_000, b: "y" }, "x"],
      [[1], "y"],
    ];
    const error = thrown(() => createStreamEncoder(columns).batchMessage(rows, 100));
    expect([error.columnIndex, error.rowIndex, error.detail]).toEqual([0, 101, "struct member 'a': number 40000 is outside the 16-bit integer range"]);
  });

  test("days since the epoch are a date only from rows read with safeIntegers (a SQLite number is never one)", () => {
    expect(fitProblem("date32", 19_000)).toBeNull();
    expect(fitProblem("date32", -719_162)).toBeNull();
    expect(fitProblem("date32", 19_000, { safeIntegers: false })).toBe("integer 19000 is not an ISO-8601 date (YYYY-MM-DD)");
    expect(fitProblem("date32", 19_000n)).toBe("integer 19000 is not an ISO-8601 date (YYYY-MM-DD)");
  });
});

describe("column types that lack what their kind needs are refused when the encoder is made", () => {
  test.each([
    [{ kind: "decimal128" }, "precision undefined and scale undefined"],
    [{ kind: "decimal128", precision: 39, scale: 0 }, "precision 39 and scale 0"],
    [{ kind: "decimal128", precision: 0, scale: 0 }, "precision 0 and scale 0"],
    [{ kind: "decimal128", precision: 5, scale: 6 }, "precision 5 and scale 6"],
    [{ kind: "decimal128", precision: 5, scale: -1 }, "precision 5 and scale -1"],
    [{ kind: "list" }, "the type of its elements"],
    [{ kind: "list", child: { kind: "list" } }, "the type of its elements"],
    [{ kind: "struct" }, "its members (fields), at least one"],
    [{ kind: "struct", fields: [] }, "its members (fields), at least one"],
    [{ kind: "struct", fields: [{ name: "a", type: { kind: "int32" } }, { name: "a", type: { kind: "utf8" } }] }, "distinct names"],
    [{ kind: "struct", fields: [{ name: "a", type: { kind: "list" } }] }, "the type of its elements"],
  ] as [ColumnType, string][])("%o", (type, message) => {
    expect(() => createStreamEncoder([{ name: "v", ...type, nullable: true }])).toThrow(message);
    expect(() => arrowTypeFor(type)).toThrow(TypeError);
  });
});

test("a query's encoder columns carry each column's whole type, whatever the engine (sql/validated.ts)", () => {
  const column = (name: string, type: ColumnType): ColumnInfo => ({ name, declaredType: "", nullable: true, rowidAlias: false, numbersOnly: false, ...type });
  const query = {
    columns: [
      { name: "price", column: column("price", { kind: "decimal128", precision: 12, scale: 4 }) },
      { name: "tags", column: column("tags", { kind: "list", child: { kind: "list", child: { kind: "utf8" } } }) },
      { name: "n", column: column("n", { kind: "int64" }) },
    ],
  } as unknown as ValidatedQuery;
  expect(encoderColumns(query)).toEqual([
    { name: "price", kind: "decimal128", precision: 12, scale: 4, nullable: true },
    { name: "tags", kind: "list", child: { kind: "list", child: { kind: "utf8" } }, nullable: true },
    { name: "n", kind: "int64", nullable: true },
  ]);
  expect(String(arrowSchema(encoderColumns(query)).fields.map((field) => String(field.type)))).toBe("Decimal[12e+4],List<List<Utf8>>,Int64");
});
