/**
 * Every PostgreSQL type of DESIGN.md §14 round-trips exactly through the binary COPY decoder: the
 * values COLUMN-TYPES.md hands to the encoders, checked against values written here and against
 * PostgreSQL's own arithmetic and text; NULL in every column; and every value a column's type
 * cannot represent is refused, naming the column and the row, never changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { ValueDoesNotFit } from "../../../src/arrow/columns.ts";
import { readPgColumns } from "../../../src/engines/postgres/catalog.ts";
import { PgValueRefused } from "../../../src/engines/postgres/value-refusal.ts";
import { selectExpression, type DecodeColumn } from "../../../src/engines/postgres/types.ts";
import { usePostgres } from "../../support/postgres.ts";
import { mulberry32 } from "../../support/random.ts";
import { copyBytes, decodeInChunks, randomChunkSizes, thrown } from "./support.ts";

const postgres = usePostgres();
let sql: SQL;

beforeAll(async () => {
  sql = new SQL({ url: postgres.url, max: 2 });
  await sql.unsafe(`CREATE DOMAIN amount AS numeric(12,2); CREATE TYPE mood AS ENUM ('calm', 'wild')`);
});

afterAll(async () => {
  await sql?.close();
});

/**
 * Days since 1970-01-01 of a proleptic Gregorian date, any year (1 BC is year 0): H. Hinnant's
 * days_from_civil, computed here rather than by Date (whose range ends in 275760).
 */
function days(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}
/** µs since 1970 of a UTC wall-clock time. */
function utcMicros(year: number, month: number, day: number, h = 0, m = 0, s = 0, us = 0): bigint {
  return BigInt(days(year, month, day)) * 86_400_000_000n + BigInt(((h * 60 + m) * 60 + s) * 1_000_000 + us);
}
const bytes = (...values: number[]) => new Uint8Array(values);
const I64 = 2n ** 63n;

/** [declared type, [SQL literal, expected value][]]: each is a table of these rows plus a NULL row. */
const roundTrips: [string, [string, unknown][]][] = [
  ["int2", [["-32768", -32768], ["32767", 32767], ["0", 0]]],
  ["int4", [["-2147483648", -2147483648], ["2147483647", 2147483647], ["-1", -1]]],
  ["int8", [["-9223372036854775808", -I64], ["9223372036854775807", I64 - 1n], ["9007199254740993", 9007199254740993n], ["-1", -1n], ["0", 0n]]],
  ["float4", [["1.5", 1.5], ["0.1", Math.fround(0.1)], ["3.4028235e38", 3.4028234663852886e38], ["'-0'", -0], ["'NaN'", NaN], ["'-Infinity'", -Infinity], ["1e-45", 1.401298464324817e-45]]],
  ["float8", [["0.1", 0.1], ["1.7976931348623157e308", 1.7976931348623157e308], ["'-0'", -0], ["'Infinity'", Infinity], ["'NaN'", NaN], ["5e-324", 5e-324]]],
  ["numeric(12,4)", [["12.34", 123400n], ["-12.34", -123400n], ["0", 0n], ["0.0001", 1n], ["-0.0001", -1n], ["99999999.9999", 999999999999n], ["-99999999.9999", -999999999999n], ["10000", 100000000n]]],
  ["numeric(38,0)", [["99999999999999999999999999999999999999", 10n ** 38n - 1n], ["-99999999999999999999999999999999999999", 1n - 10n ** 38n], ["10000000000000000000000000000000000000", 10n ** 37n], ["0", 0n]]],
  ["numeric(38,38)", [["0.99999999999999999999999999999999999999", 10n ** 38n - 1n], ["-0.00000000000000000000000000000000000001", -1n], ["0.5", 5n * 10n ** 37n], ["0", 0n]]],
  ["numeric(38,10)", [["1234567890123456789012345678.0123456789", 12345678901234567890123456780123456789n], ["-0.0000000001", -1n], ["1e20", 10n ** 30n]]],
  ["numeric(10,5)", [["0.00000", 0n], ["-0.00001", -1n], ["12345.6789", 1234567890n]]],
  ["numeric(1,0)", [["9", 9n], ["-9", -9n], ["0", 0n]]],
  ["amount", [["12.5", 1250n], ["-0.01", -1n]]],
  [
    "numeric",
    [
      ["0", "0"],
      ["0.000", "0.000"],
      ["-1.5e-20", "-0.000000000000000000015"],
      ["1e30", "1000000000000000000000000000000"],
      ["123456789012345678901234567890.123456789", "123456789012345678901234567890.123456789"],
      ["0.00010000", "0.00010000"],
      ["'NaN'", "NaN"],
      ["'Infinity'", "Infinity"],
      ["'-Infinity'", "-Infinity"],
    ],
  ],
  ["numeric(40,2)", [["12345678901234567890123456789012345678.91", "12345678901234567890123456789012345678.91"], ["-0.5", "-0.50"]]],
  ["numeric(3,-2)", [["12345", "12300"]]],
  ["text", [["''", ""], ["'héllo 🌍 中文 ∑'", "héllo 🌍 中文 ∑"], ["'line' || chr(10) || 'break'", "line\nbreak"], ["'\uFFFD is a replacement character'", "\uFFFD is a replacement character"]]],
  ["varchar(5)", [["'abc'", "abc"], ["''", ""]]],
  ["char(5)", [["'ab'", "ab   "], ["'abcde'", "abcde"]]],
  ["name", [["'pg_class'", "pg_class"]]],
  ["bool", [["true", true], ["false", false]]],
  [
    "date",
    [
      ["'1970-01-01'", 0],
      ["'1969-12-31'", -1],
      ["'2000-01-01'", 10_957],
      ["'1999-12-31'", 10_956],
      ["'0001-01-01'", days(1, 1, 1)],
      ["'4713-01-01 BC'", days(-4712, 1, 1)],
      ["'5874897-12-31'", days(5874897, 12, 31)],
    ],
  ],
  [
    "timestamp",
    [
      ["'1970-01-01 00:00:00'", 0n],
      ["'1969-12-31 23:59:59.999999'", -1n],
      ["'1999-12-31 23:59:59.999999'", 946_684_799_999_999n],
      ["'2000-01-01 00:00:00.000001'", 946_684_800_000_001n],
      ["'1900-06-15 12:34:56.789012'", utcMicros(1900, 6, 15, 12, 34, 56, 789_012)],
      ["'0001-01-01 00:00:00.000001'", utcMicros(1, 1, 1, 0, 0, 0, 1)],
      ["'4713-01-01 00:00:00 BC'", utcMicros(-4712, 1, 1)],
      ["'2262-04-11 23:47:16.854775'", utcMicros(2262, 4, 11, 23, 47, 16, 854_775)],
      ["'294246-12-31 23:59:59.999999'", utcMicros(294246, 12, 31, 23, 59, 59, 999_999)],
      // The last µs an int64 of µs since 1970 holds.
      ["'294247-01-10 04:00:54.775807'", I64 - 1n],
    ],
  ],
  [
    "timestamptz",
    [
      ["'2024-01-01 12:00:00.123456+02'", utcMicros(2024, 1, 1, 10, 0, 0, 123_456)],
      ["'1960-02-29 00:00:00.5-05:30'", utcMicros(1960, 2, 29, 5, 30, 0, 500_000)],
      ["'1970-01-01 00:00:00+00'", 0n],
    ],
  ],
  ["bytea", [["'\\x'", bytes()], ["'\\x00ff10'", bytes(0, 255, 16)]]],
  ["uuid", [["'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"], ["'00000000-0000-0000-0000-000000000000'", "00000000-0000-0000-0000-000000000000"]]],
  ["json", [[`'{"b":1,  "a" : [1.000000000000000001]}'`, `{"b":1,  "a" : [1.000000000000000001]}`]]],
  ["jsonb", [[`'{"bb":1,  "a" : [1.000000000000000001, "é"]}'`, `{"a": [1.000000000000000001, "é"], "bb": 1}`], [`'null'`, "null"]]],
  ["int4[]", [["'{}'", []], ["'{1,NULL,3}'", [1, null, 3]], ["'{NULL}'", [null]]]],
  ["int8[]", [["'{-9223372036854775808,9223372036854775807}'", [-I64, I64 - 1n]]]],
  ["text[]", [[`'{"a,b",NULL,"é",""}'`, ["a,b", null, "é", ""]]]],
  ["numeric(5,2)[]", [["'{1.5,-2.25,NULL}'", [150n, -225n, null]]]],
  ["numeric[]", [["'{1.50,NaN}'", ["1.50", "NaN"]]]],
  ["date[]", [["'{1970-01-02,NULL}'", [1, null]]]],
  ["timestamptz[]", [["'{\"1969-12-31 23:59:59.999999+00\"}'", [-1n]]]],
  ["bool[]", [["'{t,f,NULL}'", [true, false, null]]]],
  ["bytea[]", [["ARRAY['\\x01'::bytea, NULL, '\\x']", [bytes(1), null, bytes()]]]],
  ["uuid[]", [["'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'", ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]]]],
  ["jsonb[]", [[`ARRAY['{"b":2,"a":1}'::jsonb]`, [`{"a": 1, "b": 2}`]]]],
  ["float8[]", [["'{1.5,NaN,-Infinity}'", [1.5, NaN, -Infinity]]]],
  ["int2[]", [["'{-32768,32767}'", [-32768, 32767]]]],
  ["float4[]", [["'{0.1}'", [Math.fround(0.1)]]]],
  ["varchar[]", [["'{x,y}'", ["x", "y"]]]],
  ["char(2)[]", [["'{a}'", ["a "]]]],
  ["timestamp[]", [["'{\"2000-01-01 00:00:00\"}'", [946_684_800_000_000n]]]],
  ["json[]", [[`ARRAY['{"z": 1}'::json]`, [`{"z": 1}`]]]],
  // Anything else: its text form (DateStyle ISO, TimeZone UTC, IntervalStyle postgres in the read).
  ["inet", [["'10.1.2.3/8'", "10.1.2.3/8"]]],
  ["inet[]", [["'{10.0.0.1,NULL}'", "{10.0.0.1,NULL}"]]],
  ["interval", [["'1 day 02:03:04.5'", "1 day 02:03:04.5"]]],
  ["timetz", [["'12:00:00.123456+02'", "12:00:00.123456+02"]]],
  ["int4range", [["'[1,5)'", "[1,5)"]]],
  ["mood", [["'wild'", "wild"]]],
  ["point", [["'(1.5,2)'", "(1.5,2)"]]],
];

describe("round trips", () => {
  test.each(roundTrips.map(([declared, cases], i) => [declared, i, cases] as const))("%s", async (declared, i, cases) => {
    const table = `rt_${i}`;
    await sql.unsafe(`CREATE TABLE ${table} (id int PRIMARY KEY, v ${declared})`);
    const values = cases.map(([literal], row) => `(${row}, ${literal})`).join(", ");
    await sql.unsafe(`INSERT INTO ${table} VALUES ${values}, (${cases.length}, NULL)`);
    const read = await readPgColumns(sql, "public", table);
    if (!read.ok) throw new Error(read.problem);
    const columns = read.columns;
    const bytes = await copyBytes(sql, `SELECT ${columns.map((c) => selectExpression(c)).join(", ")} FROM ${table} ORDER BY id`);
    const expected = [...cases.map(([, value], row) => [row, value]), [cases.length, null]];
    expect(decodeInChunks(columns, bytes).rows).toEqual(expected);
    // The same rows whatever the chunks.
    expect(decodeInChunks(columns, bytes, () => 1).rows).toEqual(expected);
    expect(decodeInChunks(columns, bytes, randomChunkSizes(i)).rows).toEqual(expected);
  });

  test("dates and timestamps agree with PostgreSQL's own arithmetic, before and after 1970 and 2000", async () => {
    const select = `
      SELECT d, ts, ts AT TIME ZONE 'UTC' AS tz, (d - date '1970-01-01')::text AS days,
             (extract(epoch FROM ts) * 1000000)::numeric(30,0)::text AS us
      FROM (SELECT date '4713-01-01 BC' + (g * 857321.7)::int AS d,
                   timestamp '4713-01-01 00:00:00 BC' + g * interval '117 years 3 days 01:02:03.456789' AS ts
            FROM generate_series(0, 2500) g) s`;
    const columns: DecodeColumn[] = [
      { name: "d", type: { kind: "date32" }, wire: "date" },
      { name: "ts", type: { kind: "timestamp_us" }, wire: "timestamp" },
      { name: "tz", type: { kind: "timestamp_us_utc" }, wire: "timestamp" },
      { name: "days", type: { kind: "utf8" }, wire: "text" },
      { name: "us", type: { kind: "utf8" }, wire: "text" },
    ];
    const { rows } = decodeInChunks(columns, await copyBytes(sql, select), randomChunkSizes(7));
    expect(rows.length).toBe(2501);
    for (const [d, ts, tz, dayText, usText] of rows) {
      expect(d).toBe(Number(dayText));
      expect(ts).toBe(BigInt(usText as string));
      expect(tz).toBe(ts);
    }
  });

  test("numerics: 20,000 random values agree with PostgreSQL's text, as text and as Decimal128(38, 12)", async () => {
    const random = mulberry32(38);
    const literals: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + Math.floor(random() * 26);
      let text = "";
      for (let j = 0; j < digits; j++) text += Math.floor(random() * 10);
      const point = Math.floor(random() * (Math.min(digits, 12) + 1));
      const number = point === 0 ? text : `${text.slice(0, digits - point) || "0"}.${text.slice(digits - point)}`;
      literals.push((random() < 0.5 ? "-" : "") + number);
    }
    await sql.unsafe(`CREATE TABLE numbers AS SELECT ordinality AS id, x::numeric AS v FROM unnest(ARRAY[${literals.map((l) => `'${l}'`).join(",")}]) WITH ORDINALITY AS u(x, ordinality)`);
    const columns: DecodeColumn[] = [
      { name: "text", type: { kind: "utf8" }, wire: "numeric" },
      { name: "decimal", type: { kind: "decimal128", precision: 38, scale: 12 }, wire: "numeric" },
      { name: "pg_text", type: { kind: "utf8" }, wire: "text" },
      { name: "pg_unscaled", type: { kind: "utf8" }, wire: "text" },
    ];
    const bytes = await copyBytes(sql, `SELECT v, v, v::text, (v * 1e12)::numeric(50,0)::text FROM numbers ORDER BY id`);
    const { rows } = decodeInChunks(columns, bytes, randomChunkSizes(38));
    expect(rows.length).toBe(20_000);
    for (const [text, unscaled, pgText, pgUnscaled] of rows) {
      expect(text).toBe(pgText);
      expect(unscaled).toBe(BigInt(pgUnscaled as string));
    }
  });
});

/** [declared type, SQL literal, the refusal's detail] */
const refusals: [string, string, string][] = [
  ["date", "'infinity'", "date 'infinity' is no day a date column holds"],
  ["date", "'-infinity'", "date '-infinity' is no day a date column holds"],
  ["timestamp", "'infinity'", "timestamp 'infinity' is no point in time a timestamp column holds"],
  ["timestamp", "'-infinity'", "timestamp '-infinity' is no point in time a timestamp column holds"],
  ["timestamptz", "'infinity'", "timestamp 'infinity' is no point in time a timestamp column holds"],
  ["timestamptz", "'-infinity'", "timestamp '-infinity' is no point in time a timestamp column holds"],
  ["timestamp", "'294276-12-31 23:59:59.999999'", "a timestamp after 294247-01-10, beyond int64 microseconds since 1970"],
  ["timestamptz", "'294247-01-10 04:00:54.775808+00'", "a timestamp after 294247-01-10, beyond int64 microseconds since 1970"],
  ["numeric(10,2)", "'NaN'", "numeric NaN is not a number Decimal128(10, 2) can hold"],
  ["int4[]", "'{{1,2},{3,4}}'", "a 2-dimensional array (a list holds a one-dimensional array)"],
  ["int4[]", "'[0:2]={1,2,3}'", "an array whose first index is 0 (a list holds arrays that start at 1)"],
  ["text[]", "'[2:2]={x}'", "an array whose first index is 2 (a list holds arrays that start at 1)"],
  ["date[]", "'{2000-01-01,infinity}'", "element 2 of the array: date 'infinity' is no day a date column holds"],
  ["timestamptz[]", "'{-infinity}'", "element 1 of the array: timestamp '-infinity' is no point in time a timestamp column holds"],
  ["numeric(5,1)[]", "'{1.5,NaN}'", "element 2 of the array: numeric NaN is not a number Decimal128(5, 1) can hold"],
];

describe("values a column's type cannot represent are refused, naming the column and the row", () => {
  test.each(refusals.map((r, i) => [...r, i] as const))("%s %s", async (declared, literal, detail, i) => {
    const table = `refused_${i}`;
    await sql.unsafe(`CREATE TABLE ${table} (id int PRIMARY KEY, "the value" ${declared})`);
    await sql.unsafe(`INSERT INTO ${table} VALUES (0, NULL), (1, NULL), (2, ${literal}), (3, NULL)`);
    const read = await readPgColumns(sql, "public", table);
    if (!read.ok) throw new Error(read.problem);
    const bytes = await copyBytes(sql, `SELECT ${read.columns.map((c) => selectExpression(c)).join(", ")} FROM ${table} ORDER BY id`);
    const error = thrown(() => decodeInChunks(read.columns, bytes, randomChunkSizes(i)));
    expectRefused(error, 1, 2, "the value", detail);
  });

  /** Declared types narrower than the values (an engine's expression, a view whose type changed). */
  test.each([
    ["1234.5", 5, 2, "a numeric with more than 3 digits before the point, more than Decimal128(5, 2) holds"],
    ["-1000", 3, 0, "a numeric with more than 3 digits before the point, more than Decimal128(3, 0) holds"],
    ["1.234", 5, 2, "a numeric with 3 digits after the point, more than Decimal128(5, 2) holds"],
    ["0.00001", 38, 4, "a numeric with 5 digits after the point, more than Decimal128(38, 4) holds"],
    ["1e40", 38, 0, "a numeric with more than 38 digits before the point, more than Decimal128(38, 0) holds"],
    ["123456789012345678901234567890.1234567890", 38, 10, "a numeric with more than 28 digits before the point, more than Decimal128(38, 10) holds"],
    [`1.${"0".repeat(43)}1`, 38, 10, "a numeric with more significant digits than Decimal128(38, 10) holds"],
    ["'Infinity'", 10, 2, "numeric Infinity is not a number Decimal128(10, 2) can hold"],
    ["'-Infinity'", 10, 2, "numeric -Infinity is not a number Decimal128(10, 2) can hold"],
  ] as const)("numeric %s as Decimal128(%d, %d)", async (literal, precision, scale, detail) => {
    const columns: DecodeColumn[] = [
      { name: "fine", type: { kind: "int32" }, wire: "int4" },
      { name: "n", type: { kind: "decimal128", precision, scale }, wire: "numeric" },
    ];
    const bytes = await copyBytes(sql, `SELECT g, CASE WHEN g = 4 THEN ${literal}::numeric ELSE 0 END FROM generate_series(0, 5) g`);
    expectRefused(thrown(() => decodeInChunks(columns, bytes)), 1, 4, "n", detail);
  });

  test("text that is not UTF-8 is refused (PostgreSQL never sends it to a UTF8 client; the decoder still checks)", async () => {
    const columns: DecodeColumn[] = [{ name: "t", type: { kind: "utf8" }, wire: "text" }];
    const bytes = await copyBytes(sql, `SELECT x FROM (VALUES (1, 'fine'), (2, 'cafe')) v(i, x) ORDER BY i`);
    const at = bytes.lastIndexOf(0x65); // the last "e" of 'cafe'
    bytes[at] = 0xe9; // é in Latin-1: no UTF-8 sequence
    expectRefused(thrown(() => decodeInChunks(columns, bytes)), 0, 1, "t", "text that is not valid UTF-8");
  });
});

function expectRefused(error: unknown, columnIndex: number, rowIndex: number, column: string, detail: string): void {
  expect(error).toBeInstanceOf(PgValueRefused);
  expect(error).toBeInstanceOf(ValueDoesNotFit);
  const refused = error as PgValueRefused;
  expect(refused.columnIndex).toBe(columnIndex);
  expect(refused.rowIndex).toBe(rowIndex);
  expect(refused.column).toBe(column);
  expect(refused.detail).toBe(detail);
  expect(refused.message).toBe(`the value at row ${rowIndex} of column '${column}' cannot be represented in its column's type: ${detail}`);
}
