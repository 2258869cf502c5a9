/**
 * Values that do not fit their column's Arrow type are never changed silently (ARCHITECTURE.md §5):
 * the encoder throws ValueDoesNotFit naming the 0-based column and row, and `fitProblem` gives the
 * same detail (what `arrow402 validate` reports).
 */
import { describe, expect, test } from "bun:test";
import { createStreamEncoder, encodeRowsToIpc, fitProblem, ValueDoesNotFit, type EncoderColumn } from "../../src/arrow/encode.ts";
import type { ArrowKind } from "../../src/arrow/types.ts";
import { encoderColumns, storeAndRead, type TestColumn } from "./support.ts";

function thrown(action: () => unknown): ValueDoesNotFit {
  try {
    action();
  } catch (error) {
    if (error instanceof ValueDoesNotFit) return error;
    throw error;
  }
  throw new Error("expected ValueDoesNotFit, nothing was thrown");
}

/** [declared type, stored value, expected detail] — the value is stored in a real SQLite file. */
const storedMisfits: [string, unknown, string][] = [
  ["INTEGER", "abc", "text 'abc' is not an integer"],
  ["INTEGER", 2.5, "real 2.5 is not an integer"],
  ["INTEGER", new Uint8Array([1, 2]), "blob of 2 bytes is not an integer"],
  ["INTEGER", 1e300, "real 1e+300 is outside the 64-bit integer range"],
  ["REAL", "abc", "text 'abc' is not a number"],
  ["REAL", new Uint8Array([1]), "blob of 1 byte is not a number"],
  ["TEXT", new Uint8Array([0xff, 0]), "blob of 2 bytes is not text"],
  ["", new Uint8Array(3), "blob of 3 bytes is not text"],
  ["BLOB", "abc", "text 'abc' is not a blob"],
  ["BLOB", 5n, "integer 5 is not a blob"],
  ["BOOLEAN", 2n, "integer 2 is not a boolean (0 or 1)"],
  ["BOOLEAN", "yes", "text 'yes' is not a boolean (0 or 1)"],
  ["BOOLEAN", 0.5, "real 0.5 is not a boolean (0 or 1)"],
  ["DATE", "2023-02-30", "text '2023-02-30' is not an ISO-8601 date (YYYY-MM-DD)"],
  ["DATE", "2023-1-5", "text '2023-1-5' is not an ISO-8601 date (YYYY-MM-DD)"],
  ["DATE", "2023-01-05 10:00", "text '2023-01-05 10:00' is not an ISO-8601 date (YYYY-MM-DD)"],
  ["DATE", 20230105n, "integer 20230105 is not an ISO-8601 date (YYYY-MM-DD)"],
  ["DATE", "1900-02-29", "text '1900-02-29' is not an ISO-8601 date (YYYY-MM-DD)"],
  ["TIMESTAMP", "yesterday", "text 'yesterday' is not an ISO-8601 timestamp"],
  ["TIMESTAMP", "2024-01-01 24:00", "text '2024-01-01 24:00' is not an ISO-8601 timestamp"],
  ["TIMESTAMP", "2024-02-30 10:00", "text '2024-02-30 10:00' is not an ISO-8601 timestamp"],
  ["TIMESTAMP", "2024-01-01T10:00:00+5:00", "text '2024-01-01T10:00:00+5:00' is not an ISO-8601 timestamp"],
  ["DATETIME", "2024-01-01T10:00:00.1234", "text '2024-01-01T10:00:00.1234' has sub-millisecond precision"],
  ["DATETIME", "2024-01-01 10:00:00.123456Z", "text '2024-01-01 10:00:00.123456Z' has sub-millisecond precision"],
  ["DATETIME", 1_700_000_000.0005, "real 1700000000.0005 Unix seconds is not a whole number of milliseconds"],
  ["DATETIME", 2n ** 62n, "integer 4611686018427387904 Unix seconds is outside the timestamp range"],
  ["DATETIME", new Uint8Array(1), "blob of 1 byte is not a timestamp (ISO-8601 text or Unix seconds)"],
];

describe("values stored in SQLite that do not fit", () => {
  for (const [declared, value, detail] of storedMisfits) {
    test(`${declared || "untyped"}: ${detail}`, () => {
      const columns: TestColumn[] = [{ name: "ok", declared: "INTEGER" }, { name: "v", declared }];
      const rows = storeAndRead(columns, [[1n, null], [2n, null], [3n, null], [4n, value], [5n, null]]);
      const error = thrown(() => encodeRowsToIpc(encoderColumns(columns), rows, 3));
      expect(error.columnIndex).toBe(1);
      expect(error.rowIndex).toBe(3);
      expect(error.detail).toBe(detail);
      const kind = encoderColumns(columns)[1]!.kind;
      expect(fitProblem(kind, rows[3]![1])).toBe(detail);
      expect(fitProblem(kind, rows[0]![1])).toBeNull();
    });
  }
});

describe("values from JavaScript callers", () => {
  const cases: [ArrowKind, unknown, string][] = [
    ["int64", 2n ** 63n, "integer 9223372036854775808 is outside the 64-bit range"],
    ["int64", -(2n ** 63n) - 1n, "integer -9223372036854775809 is outside the 64-bit range"],
    ["int64", true, "boolean true is not an integer"],
    ["int64", undefined, "a missing value is not an integer"],
    ["float64", 2n ** 53n + 1n, "integer 9007199254740993 cannot be represented exactly as a 64-bit float"],
    ["utf8", NaN, "real NaN has no SQLite text form"],
    ["timestamp", Infinity, "real Infinity is not a timestamp (ISO-8601 text or Unix seconds)"],
    ["binary", {}, "a object that is not a SQLite value is not a blob"],
  ];
  for (const [kind, value, detail] of cases) {
    test(`${kind}: ${detail}`, () => {
      const error = thrown(() => encodeRowsToIpc([{ name: "v", kind, nullable: true }], [[null], [value]]));
      expect([error.columnIndex, error.rowIndex, error.detail]).toEqual([0, 1, detail]);
      expect(fitProblem(kind, value)).toBe(detail);
    });
  }

  test("values that do fit: exact float conversions, booleans, integral reals in Int64", () => {
    expect(fitProblem("float64", 2n ** 60n)).toBeNull();
    expect(fitProblem("bool", true)).toBeNull();
    expect(fitProblem("int64", 2 ** 60)).toBeNull();
    expect(fitProblem("timestamp", 1_700_000_000.123)).toBeNull();
    expect(fitProblem("utf8", null)).toBeNull();
  });

  test("NULL in a column declared NOT NULL does not fit", () => {
    const columns: EncoderColumn[] = [{ name: "a", kind: "utf8", nullable: true }, { name: "b", kind: "int64", nullable: false }];
    const error = thrown(() => encodeRowsToIpc(columns, [[null, 1n], ["x", null]]));
    expect([error.columnIndex, error.rowIndex, error.detail]).toEqual([1, 1, "NULL in a column declared NOT NULL"]);
    expect(fitProblem("int64", null, { nullable: false })).toBe("NULL in a column declared NOT NULL");
  });

  test("row positions count from the batch's first row in the result", () => {
    const encoder = createStreamEncoder([{ name: "d", kind: "date32", nullable: true }]);
    const error = thrown(() => encoder.batchMessage([["2024-01-01"], ["2024-01-02"], ["soon"]], 65_536));
    expect([error.columnIndex, error.rowIndex]).toEqual([0, 65_538]);
    expect(error.message).toContain("soon");
  });

  test("without safeIntegers an integer beyond 2^53 may have been rounded, so it does not fit", () => {
    const detail = "integer 9007199254740992 beyond 2^53 may have been rounded (read it with safeIntegers)";
    expect(fitProblem("int64", 2 ** 53, { safeIntegers: false })).toBe(detail);
    expect(fitProblem("utf8", 2 ** 53, { safeIntegers: false })).toBe(detail);
    expect(fitProblem("float64", 2 ** 53, { safeIntegers: false })).toBeNull();
    const error = thrown(() => encodeRowsToIpc([{ name: "i", kind: "int64", nullable: true }], [[1], [2 ** 53]], 10, { safeIntegers: false }));
    expect([error.rowIndex, error.detail]).toEqual([1, detail]);
  });
});
