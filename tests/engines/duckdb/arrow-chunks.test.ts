/**
 * DuckDB's vectors straight into Arrow buffers (src/engines/duckdb/arrow-chunks.ts): for every type
 * it takes, the record batches of a read are byte for byte what the Arrow encoder makes of the same
 * read's values (the values path: values.ts, then arrow/encode.ts), batch by batch: validity
 * bitmaps, offsets, NULL slots, inline (≤ 12 bytes) and out-of-line text, whole chunks and the
 * few-row chunks of a sparse filter gathered into batches. The values it must refuse are refused
 * with the same column, row and words; a column of another type sends the read down the values path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { join } from "node:path";
import { createStreamEncoder, ValueDoesNotFit, type EncoderColumn } from "../../../src/arrow/encode.ts";
import { openDuckRead } from "../../../src/engines/duckdb/read.ts";
import type { DuckColumnType } from "../../../src/engines/duckdb/types.ts";
import { tempDir } from "../../support/fixtures.ts";

let instance: DuckDBInstance;
let parquet: string;

/** Every DuckDB type arrow-chunks.ts takes, with its Arrow kind. */
const COLUMNS: [name: string, duck: string, kind: DuckColumnType["kind"]][] = [
  ["i8", "BIGINT", "int64"],
  ["i4", "INTEGER", "int32"],
  ["i2", "SMALLINT", "int16"],
  ["f4", "FLOAT", "float32"],
  ["f8", "DOUBLE", "float64"],
  ["d", "DATE", "date32"],
  ["ts", "TIMESTAMP", "timestamp_us"],
  ["tz", "TIMESTAMPTZ", "timestamp_us_utc"],
  ["b", "BOOLEAN", "bool"],
  ["t", "VARCHAR", "utf8"],
];

/**
 * 5,000 rows (two full chunks and a part), a NULL in each column every few rows, values at the
 * types' edges, text empty, of 12 bytes (the longest kept inline in DuckDB's string_t), 13 bytes,
 * accented, emoji and long.
 */
const ROWS = `
  SELECT CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN -9223372036854775808 WHEN g % 19 = 0 THEN 9223372036854775807 ELSE g * 1234567890123 END::BIGINT AS i8,
         CASE WHEN g % 11 = 0 THEN NULL WHEN g % 23 = 0 THEN -2147483648 ELSE (g * 104729) % 2147483647 - 1073741824 END::INTEGER AS i4,
         CASE WHEN g % 7 = 0 THEN NULL ELSE g % 65536 - 32768 END::SMALLINT AS i2,
         CASE WHEN g % 5 = 0 THEN NULL WHEN g % 29 = 0 THEN 'NaN'::FLOAT WHEN g % 31 = 0 THEN '-0.0'::FLOAT ELSE g / 3.0 END::FLOAT AS f4,
         CASE WHEN g % 3 = 0 THEN NULL WHEN g % 37 = 0 THEN '-Infinity'::DOUBLE WHEN g % 41 = 0 THEN 5e-324 ELSE g / 7.0 END::DOUBLE AS f8,
         CASE WHEN g % 9 = 0 THEN NULL ELSE DATE '0001-01-01' + (g * 1459)::INTEGER END AS d,
         CASE WHEN g % 10 = 0 THEN NULL ELSE TIMESTAMP '1900-01-01' + to_microseconds(g * 1234567890123) END AS ts,
         CASE WHEN g % 8 = 0 THEN NULL ELSE TIMESTAMPTZ '1970-01-01 00:00:00+00' - to_microseconds(g * 259200000001) END AS tz,
         CASE WHEN g % 4 = 0 THEN NULL ELSE g % 3 = 0 END AS b,
         CASE WHEN g % 6 = 0 THEN NULL WHEN g % 43 = 0 THEN '' WHEN g % 47 = 0 THEN 'abcdefghijkl' WHEN g % 53 = 0 THEN 'abcdefghijklm'
              WHEN g % 59 = 0 THEN repeat('Été ☃ 😀 ', (g % 20)::INTEGER) ELSE md5(g::VARCHAR)[1:(g % 33)::INTEGER] || repeat('x', (g % 90)::INTEGER) END AS t,
         g AS id
  FROM range(1, 5001) r(g)`;

beforeAll(async () => {
  instance = await DuckDBInstance.create(":memory:");
  parquet = join(tempDir(), "v.parquet");
  const writer = await instance.connect();
  await writer.run(`CREATE TABLE v AS ${ROWS}`);
  await writer.run(`COPY v TO '${parquet}' (FORMAT parquet, ROW_GROUP_SIZE 3000)`);
  writer.closeSync();
});

afterAll(() => instance?.closeSync());

const typesOf = (names: string[]): DuckColumnType[] => names.map((name) => ({ kind: COLUMNS.find((c) => c[0] === name)![2] }) as DuckColumnType);
const encoderOf = (names: string[], nullable = true): EncoderColumn[] => names.map((name) => ({ name, kind: COLUMNS.find((c) => c[0] === name)![2], nullable }) as EncoderColumn);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

interface Read {
  /** Each batch: its first row, its row count and its record-batch message. */
  batches: [firstRowIndex: number, length: number, message: string][];
  /** Where the vector path was taken, the batches it made itself. */
  direct: number;
}

/** The select read once, its batches encoded by arrow-chunks.ts (`direct`) or by the encoder from its values. */
async function read(select: string, names: string[], direct: boolean, nullable = true): Promise<Read> {
  const encoder = encoderOf(names, nullable);
  const stream = createStreamEncoder(encoder);
  const opened = await openDuckRead(instance, { select, types: typesOf(names), count: null, timeoutMs: 30_000, ...(direct ? { arrow: encoder } : {}) });
  const batches: Read["batches"] = [];
  let own = 0;
  for await (const batch of opened.batches) {
    if (batch.arrow !== undefined) own++;
    const message = batch.arrow ?? stream.batchMessage(batch.rows, batch.firstRowIndex);
    batches.push([batch.firstRowIndex, batch.arrow !== undefined ? batch.length! : batch.rows.length, hex(message)]);
  }
  return { batches, direct: own };
}

async function refusal(select: string, names: string[], direct: boolean, nullable = true): Promise<ValueDoesNotFit> {
  const error = await read(select, names, direct, nullable).then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ValueDoesNotFit);
  return error as ValueDoesNotFit;
}

const ALL = COLUMNS.map((c) => c[0]);

describe("the encoder's bytes, batch by batch", () => {
  test.each([
    ["every type, 5,000 rows (whole chunks)", `SELECT ${ALL.join(", ")} FROM v ORDER BY id`, ALL],
    ["every type from a Parquet file (row groups of 3,000 rows)", `SELECT ${ALL.join(", ")} FROM read_parquet('PARQUET') ORDER BY id`, ALL],
    ["a sparse filter: few-row chunks gathered", `SELECT ${ALL.join(", ")} FROM read_parquet('PARQUET') WHERE id % 97 = 0`, ALL],
    ["text alone, inline and out of line", "SELECT t FROM v ORDER BY id", ["t"]],
    ["booleans across byte boundaries: 1,003 rows", "SELECT b, i2 FROM v WHERE id <= 1003 ORDER BY id", ["b", "i2"]],
    ["ten rows", `SELECT ${ALL.join(", ")} FROM v ORDER BY id LIMIT 10`, ALL],
    ["no rows", `SELECT ${ALL.join(", ")} FROM v WHERE id < 0`, ALL],
    ["no NULLs in NOT NULL columns (no validity bitmap)", "SELECT id AS i8, (id % 100)::INTEGER AS i4, 'row ' || id AS t FROM v ORDER BY id", ["i8", "i4", "t"], false],
  ] as [string, string, string[], boolean?][])("%s", async (_, sql, names, nullable = true) => {
    const select = sql.replaceAll("PARQUET", parquet);
    const viaValues = await read(select, names, false, nullable);
    const viaVectors = await read(select, names, true, nullable);
    expect(viaValues.direct).toBe(0);
    expect(viaVectors.direct).toBe(viaVectors.batches.length);
    // A sparse filter's batches end where the gathering's clock says: compare the rows, then the bytes where the batches agree.
    expect(viaVectors.batches.reduce((n, b) => n + b[1], 0)).toBe(viaValues.batches.reduce((n, b) => n + b[1], 0));
    if (sql.includes("% 97")) {
      const byStart = new Map(viaValues.batches.map((b) => [`${b[0]}:${b[1]}`, b[2]]));
      const same = viaVectors.batches.filter((b) => byStart.has(`${b[0]}:${b[1]}`));
      expect(same.length).toBeGreaterThan(0);
      for (const b of same) expect(b[2]).toBe(byStart.get(`${b[0]}:${b[1]}`)!);
    } else {
      expect(viaVectors.batches).toEqual(viaValues.batches);
    }
  }, 60_000);
});

describe("refusals: the same column, row and words", () => {
  test.each([
    ["an infinite date in the third chunk", "SELECT i8, d FROM (SELECT i8, CASE WHEN id = 4500 THEN 'infinity'::DATE ELSE d END AS d, id FROM v) ORDER BY id", ["i8", "d"]],
    ["a -infinity timestamp", "SELECT t, ts FROM (SELECT t, CASE WHEN id = 77 THEN '-infinity'::TIMESTAMP ELSE ts END AS ts, id FROM v) ORDER BY id", ["t", "ts"]],
    ["an infinite timestamp with time zone", "SELECT tz FROM (SELECT CASE WHEN id = 2049 THEN 'infinity'::TIMESTAMPTZ ELSE tz END AS tz, id FROM v) ORDER BY id", ["tz"]],
  ])("%s", async (_, select, names) => {
    const values = await refusal(select, names, false);
    const vectors = await refusal(select, names, true);
    expect([vectors.columnIndex, vectors.rowIndex, vectors.detail]).toEqual([values.columnIndex, values.rowIndex, values.detail]);
  });

  test("a NULL in a NOT NULL column, in the second chunk: the first such column, its first row", async () => {
    const select = "SELECT id AS i8, CASE WHEN id IN (2100, 3000) THEN NULL ELSE 'x' END AS t, CASE WHEN id = 2500 THEN NULL ELSE id END::INTEGER AS i4 FROM v ORDER BY id";
    const values = await refusal(select, ["i8", "t", "i4"], false, false);
    const vectors = await refusal(select, ["i8", "t", "i4"], true, false);
    expect([vectors.columnIndex, vectors.rowIndex, vectors.detail]).toEqual([values.columnIndex, values.rowIndex, values.detail]);
    expect([vectors.columnIndex, vectors.rowIndex]).toEqual([1, 2099]);
  });
});

test("a column of a type arrow-chunks.ts does not take (DECIMAL): the whole read makes values, with the same bytes", async () => {
  const select = "SELECT id AS i8, (id / 7)::DECIMAL(12,3) AS n FROM v ORDER BY id";
  const types: DuckColumnType[] = [{ kind: "int64" }, { kind: "decimal128", precision: 12, scale: 3 } as DuckColumnType];
  const encoder: EncoderColumn[] = [{ name: "i8", kind: "int64", nullable: true } as EncoderColumn, { name: "n", kind: "decimal128", precision: 12, scale: 3, nullable: true } as EncoderColumn];
  const opened = await openDuckRead(instance, { select, types, count: null, timeoutMs: 30_000, arrow: encoder });
  const batches = await Array.fromAsync(opened.batches);
  expect(batches.every((batch) => batch.arrow === undefined)).toBe(true);
  expect(batches.reduce((n, batch) => n + batch.rows.length, 0)).toBe(5_000);
});
