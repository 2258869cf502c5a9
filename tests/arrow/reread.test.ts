/**
 * Rows read without safeIntegers (encode.ts `rereadAmbiguousNumbers`, used for whole-table
 * exports): the bytes equal the exact encoding of the same rows read with safeIntegers, and every
 * value whose exact value or storage class a number cannot carry asks for the exact read instead.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { AmbiguousNumber, createStreamEncoder, type EncoderColumn } from "../../src/arrow/encode.ts";
import type { ArrowKind } from "../../src/arrow/types.ts";

/** One column of `kind` holding `value`, read both ways from a real SQLite table. */
function bothWays(declared: string, kind: ArrowKind, values: unknown[]) {
  const db = new Database(":memory:");
  db.run(`CREATE TABLE t (v ${declared})`);
  for (const value of values) db.run("INSERT INTO t VALUES (?)", [value as never]);
  const exact = db.query("SELECT v FROM t").safeIntegers(true).all() as Record<string, unknown>[];
  const fast = db.query("SELECT v FROM t").safeIntegers(false).all() as Record<string, unknown>[];
  db.close();
  const columns: EncoderColumn[] = [{ name: "v", kind, nullable: true }];
  return {
    exact: () => createStreamEncoder(columns).batchMessage(exact, 0),
    fast: () => createStreamEncoder(columns, { rereadAmbiguousNumbers: true }).batchMessage(fast, 0),
  };
}

describe("values a number carries exactly: the same bytes as the exact read", () => {
  test.each([
    ["INTEGER", "int64", [0, 1, -1, 2 ** 53 - 1, -(2 ** 53 - 1), null, 42]],
    // REAL affinity stores every number as a REAL, 2^53 + 1 given as an integer too: no number is ambiguous.
    ["REAL", "float64", [0.5, -1.25, 1e-300, 2 ** 53 - 1, -(2 ** 52) + 0.5, null, 3, 1e20, -(2 ** 60), 2n ** 53n + 1n]],
    ["TEXT", "utf8", ["a", "", "ünï", null]],
    ["BOOLEAN", "bool", [0, 1, null, 1]],
    ["TIMESTAMP", "timestamp", ["2024-05-06T07:08:09.123Z", "2024-05-06 07:08:09", null]],
    ["DATE", "date32", ["2024-05-06", null]],
  ] as const)("%s as %s", (declared, kind, values) => {
    const { exact, fast } = bothWays(declared, kind, [...values]);
    expect(fast()).toEqual(exact());
  });
});

describe("values a number may not carry exactly: AmbiguousNumber, read again", () => {
  test.each([
    ["an integer beyond 2^53", "INTEGER", "int64", 2n ** 53n + 1n],
    ["a negative integer beyond 2^53", "INTEGER", "int64", -(2n ** 62n) - 3n],
    ["a REAL in an INTEGER column", "INTEGER", "int64", 1.5],
    ["an integer stored in a TEXT-kind column of no affinity", "ANY", "utf8", 5],
    ["a REAL in a TEXT-kind column of no affinity", "ANY", "utf8", 5.5],
    ["an integer timestamp", "INTEGER", "timestamp", 1_700_000_000_000],
    ["an integer 2 in a bool column", "INTEGER", "bool", 2],
    ["text in an INTEGER column (a misfit: named by the exact read)", "INTEGER", "int64", "seven"],
  ] as const)("%s", (_name, declared, kind, value) => {
    const { fast } = bothWays(declared, kind, [1, value]);
    expect(fast).toThrow(AmbiguousNumber);
  });
});
