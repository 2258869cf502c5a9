/**
 * Property: random tables (random kinds, values and nulls, random batch sizes) stored in a real
 * SQLite file round-trip exactly through the encoder and apache-arrow; a table with misfits fails
 * at the first misfit in stream order (batch, then column, then row) with its exact position.
 * Expected values come from the generator, not from the encoder's own conversions.
 */
import { describe, expect, test } from "bun:test";
import { createStreamEncoder, encodeRowsToIpc, fitProblem, ValueDoesNotFit } from "../../src/arrow/encode.ts";
import { arrowKindFor, type SqliteKind } from "../../src/arrow/types.ts";
import { decode, decodedColumn, encoderColumns, seededRandom, storeAndRead, type TestColumn } from "./support.ts";

type Random = () => number;
interface Sample {
  stored: unknown;
  expected: unknown;
}

const CASES = 200;
const DECLARED: Record<SqliteKind, string[]> = {
  int64: ["INTEGER", "BIGINT", "INT"],
  float64: ["REAL", "DOUBLE", "FLOAT"],
  utf8: ["TEXT", "VARCHAR(12)", "CLOB"],
  binary: ["BLOB"],
  bool: ["BOOLEAN", "BOOL"],
  date32: ["DATE"],
  timestamp: ["DATETIME", "TIMESTAMP"],
};
const KINDS = Object.keys(DECLARED) as SqliteKind[];
/** Values each column type stores as they are but cannot represent. */
const MISFITS: Record<SqliteKind, unknown[]> = {
  int64: ["twelve", 1.5, new Uint8Array([1])],
  float64: ["pi", new Uint8Array([2])],
  utf8: [new Uint8Array([3, 4])],
  binary: ["text", 7n],
  bool: [2n, "true"],
  date32: ["2024-13-01", "2024-02-30", 20240101n],
  timestamp: ["noon", "2024-01-01 10:00:00.0001", 0.0001],
};

const pick = <T,>(random: Random, items: T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, below: number) => Math.floor(random() * below);
const pad = (n: number, width = 2) => String(n).padStart(width, "0");

function randomBigInt(random: Random): bigint {
  const edges = [0n, 1n, -1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n)];
  if (random() < 0.3) return pick(random, edges);
  const magnitude = BigInt(int(random, 2 ** 31)) * BigInt(int(random, 2 ** 31)) * BigInt(1 + int(random, 2)); // below 2^63
  return random() < 0.5 ? -magnitude : magnitude;
}

function randomText(random: Random): string {
  const alphabet = ["a", "Z", "0", " ", "é", "ß", "日", "本", "😀", "\t", "'", '"', "\\"];
  const ascii = random() < 0.5;
  return Array.from({ length: int(random, 12) }, () => (ascii ? pick(random, alphabet.slice(0, 4)) : pick(random, alphabet))).join("");
}

function sample(kind: SqliteKind, random: Random): Sample {
  switch (kind) {
    case "int64": {
      const value = randomBigInt(random);
      return { stored: value, expected: value };
    }
    case "float64": {
      const value = pick(random, [random() * 1e6 - 5e5, (random() - 0.5) * 10 ** int(random, 300), 0.5, -1e-300, Infinity, 1 / 3]);
      return { stored: value, expected: value };
    }
    case "utf8": {
      const value = randomText(random);
      return { stored: value, expected: value };
    }
    case "binary": {
      const bytes = Uint8Array.from({ length: int(random, 9) }, () => int(random, 256));
      return { stored: bytes, expected: [...bytes] };
    }
    case "bool": {
      const value = random() < 0.5;
      return { stored: value ? 1n : 0n, expected: value };
    }
    case "date32": {
      const ms = Date.UTC(1 + int(random, 9998), int(random, 12), 1 + int(random, 28));
      return { stored: new Date(ms).toISOString().slice(0, 10).replace(/^\+?0*(\d{4})/, "$1"), expected: ms };
    }
    case "timestamp":
      return timestampSample(random);
  }
}

function timestampSample(random: Random): Sample {
  const ms = int(random, 2 ** 41) * (random() < 0.2 ? -1 : 1); // 1900 … 2039
  const form = int(random, 4);
  if (form === 0) return { stored: BigInt(Math.floor(ms / 1000)), expected: Math.floor(ms / 1000) * 1000 };
  if (form === 1) {
    const seconds = Math.floor(ms / 1000) + pick(random, [0.5, 0.25, 0.125]);
    return { stored: seconds, expected: seconds * 1000 };
  }
  const offsetMinutes = form === 3 ? (int(random, 28) - 14) * 30 : 0;
  const local = new Date(ms + offsetMinutes * 60_000).toISOString(); // YYYY-MM-DDTHH:MM:SS.fffZ
  const sign = offsetMinutes < 0 ? "-" : "+";
  const zone = form === 3 ? `${sign}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}` : pick(random, ["Z", ""]);
  return { stored: `${local.slice(0, 10)}${pick(random, ["T", " "])}${local.slice(11, 23)}${zone}`, expected: ms };
}

interface Case {
  columns: TestColumn[];
  stored: unknown[][];
  expected: unknown[][]; // by column
  misfits: { row: number; column: number }[];
  batchSize: number;
}

function randomCase(random: Random): Case {
  const columns: TestColumn[] = Array.from({ length: 1 + int(random, 5) }, (_, i) => {
    const kind = pick(random, KINDS);
    return { name: `c${i}`, declared: pick(random, DECLARED[kind]), notNull: random() < 0.2 };
  });
  const rowCount = int(random, 25);
  const withMisfits = random() < 0.25;
  const expected: unknown[][] = columns.map(() => []);
  const misfits: Case["misfits"] = [];
  const stored = Array.from({ length: rowCount }, (_, row) =>
    columns.map((column, c) => {
      const kind = arrowKindFor(column.declared);
      if (withMisfits && random() < 0.05) {
        misfits.push({ row, column: c });
        expected[c]!.push(undefined);
        return pick(random, MISFITS[kind]);
      }
      if (!column.notNull && random() < 0.2) {
        expected[c]!.push(null);
        return null;
      }
      const { stored: value, expected: decoded } = sample(kind, random);
      expected[c]!.push(decoded);
      return value;
    }),
  );
  return { columns, stored, expected, misfits, batchSize: 1 + int(random, 8) };
}

/** The misfit the encoder meets first: batches in order, columns in order within a batch. */
function firstMisfit(misfits: Case["misfits"], batchSize: number) {
  const order = (m: { row: number; column: number }) => [Math.floor(m.row / batchSize), m.column, m.row];
  return [...misfits].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  })[0];
}

const plain = (value: unknown) => (value instanceof Uint8Array ? [...value] : value);

describe("random tables", () => {
  test(`${CASES} seeded cases round-trip exactly or fail at the first misfit`, () => {
    const random = seededRandom(20_240_229);
    let failures = 0;
    for (let i = 0; i < CASES; i++) {
      const c = randomCase(random);
      const rows = storeAndRead(c.columns, c.stored);
      const columns = encoderColumns(c.columns);
      const first = firstMisfit(c.misfits, c.batchSize);
      const label = { case: i, columns: c.columns, batchSize: c.batchSize };
      if (first) {
        failures++;
        let error: unknown;
        try {
          encodeRowsToIpc(columns, rows, c.batchSize);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ValueDoesNotFit);
        const { columnIndex, rowIndex, detail } = error as ValueDoesNotFit;
        expect({ ...label, columnIndex, rowIndex }).toEqual({ ...label, columnIndex: first.column, rowIndex: first.row });
        expect(detail).toBe(fitProblem(columns[first.column]!.kind, rows[first.row]![first.column])!);
        continue;
      }
      const table = decode(encodeRowsToIpc(columns, rows, c.batchSize));
      expect(table.numRows).toBe(c.stored.length);
      if (c.stored.length > 0) expect(table.batches.length).toBe(Math.ceil(c.stored.length / c.batchSize));
      columns.forEach((_, col) => {
        expect({ ...label, col, values: decodedColumn(table, col).map(plain) }).toEqual({ ...label, col, values: c.expected[col]! });
      });
      // The one-buffer form of a small result is the same stream as its messages end to end.
      const whole = createStreamEncoder(columns).wholeStream(rows);
      if (rows.length > 0) expect(whole).toEqual(encodeRowsToIpc(columns, rows, rows.length));
      const wholeTable = decode(whole);
      expect(wholeTable.numRows).toBe(rows.length);
      columns.forEach((_, col) => {
        expect({ ...label, col, values: decodedColumn(wholeTable, col).map(plain) }).toEqual({ ...label, col, values: c.expected[col]! });
      });
      // Everything the encoder accepted, `validate` accepts too.
      rows.forEach((row) => row.forEach((value, col) => expect(fitProblem(columns[col]!.kind, value)).toBeNull()));
    }
    expect(failures).toBeGreaterThan(10); // the misfit half of the property did run
  });
});
