/**
 * Every format refuses exactly the values the Arrow encoder refuses (ARCHITECTURE.md §5), with the same
 * ValueDoesNotFit: same column, same row of the result, same detail.
 */
import { describe, expect, test } from "bun:test";
import { createStreamEncoder, ValueDoesNotFit, type EncoderColumn, type Row } from "../../src/arrow/encode.ts";
import type { ArrowKind } from "../../src/arrow/types.ts";
import { FORMATS } from "../../src/formats/registry.ts";
import { columnsOf, readRows, sqliteFile } from "./support.ts";

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

/** [declared type, stored value as SQL] — each stored in a real SQLite file. */
const stored: [string, string][] = [
  ["INTEGER", "'abc'"],
  ["INTEGER", "2.5"],
  ["INTEGER", "X'0102'"],
  ["INTEGER", "1e300"],
  ["REAL", "'abc'"],
  ["REAL", "X'01'"],
  ["TEXT", "X'FF00'"],
  ["", "X'000000'"],
  ["BLOB", "'abc'"],
  ["BLOB", "5"],
  ["BOOLEAN", "2"],
  ["BOOLEAN", "'yes'"],
  ["BOOLEAN", "0.5"],
  ["DATE", "'2023-02-30'"],
  ["DATE", "'2023-1-5'"],
  ["DATE", "20230105"],
  ["TIMESTAMP", "'yesterday'"],
  ["TIMESTAMP", "'2024-01-01 24:00'"],
  ["DATETIME", "'2024-01-01T10:00:00.1234'"],
  ["DATETIME", "1700000000.0005"],
  ["DATETIME", "4611686018427387904"],
  ["DATETIME", "X'01'"],
];

describe.each(FORMATS.map((f) => [f.name, f] as const))("%s", (_, format) => {
  test.each(stored)("%s column holding %s", (declared, literal) => {
    const path = sqliteFile([
      `CREATE TABLE t (ok INTEGER, v ${declared})`,
      `INSERT INTO t VALUES (1, NULL), (2, NULL), (3, NULL), (4, ${literal}), (5, NULL)`,
    ]);
    const { rows, rowKeys } = readRows(path, "SELECT * FROM t");
    const columns = columnsOf(path, "t");
    const arrow = thrown(() => encodeInBatches(createArrow(columns, rowKeys), rows, 3));
    expect(arrow).not.toBeNull();
    expect(arrow!.rowIndex).toBe(3);
    const encoder = format.create(columns, { rowKeys });
    expect(failure(thrown(() => encodeInBatches(encoder, rows, 3)))).toEqual(failure(arrow));
  });

  test("NULL in a NOT NULL column", () => {
    const columns: EncoderColumn[] = [
      { name: "a", kind: "int64", nullable: true },
      { name: "b", kind: "utf8", nullable: false },
    ];
    const rows: Row[] = [
      [1n, "x"],
      [null, null],
    ];
    const error = thrown(() => encodeInBatches(format.create(columns), rows, 10));
    expect(failure(error)).toEqual({ column: 1, row: 1, detail: "NULL in a column declared NOT NULL" });
  });

  // Misfits scattered over a batch: the one named is the Arrow encoder's (first column, then row).
  test("several misfits in a batch: the same one as Arrow is named", () => {
    const kinds: ArrowKind[] = ["int64", "float64", "utf8", "binary", "bool", "date32", "timestamp"];
    const columns: EncoderColumn[] = kinds.map((kind, i) => ({ name: `c${i}`, kind, nullable: true }));
    const good: unknown[] = [1n, 1.5, "t", new Uint8Array([1]), 1n, "2024-01-01", "2024-01-01 00:00"];
    const bad: unknown[] = ["x", "x", new Uint8Array(1), "x", 7n, "x", "x"];
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let round = 0; round < 40; round++) {
      const rows: Row[] = Array.from({ length: 12 }, () => kinds.map((_, c) => (random() < 0.05 ? bad[c] : random() < 0.2 ? null : good[c])));
      const first = 100 * round;
      const arrow = thrown(() => createStreamEncoder(columns).batchMessage(rows, first));
      const other = thrown(() => format.create(columns).batch(rows, first));
      expect(failure(other)).toEqual(failure(arrow));
    }
  });
});

function createArrow(columns: EncoderColumn[], rowKeys: string[]) {
  const encoder = createStreamEncoder(columns, { rowKeys });
  return { head: () => encoder.schemaMessage(), batch: encoder.batchMessage, end: encoder.endMessage };
}

function encodeInBatches(encoder: { head(): unknown; batch(rows: Row[], first: number): unknown; end(): unknown }, rows: Row[], size: number): void {
  encoder.head();
  for (let first = 0; first < rows.length; first += size) encoder.batch(rows.slice(first, first + size), first);
  encoder.end();
}
