/**
 * The column kinds of the other engines (DESIGN §14, arrow/types.ts), one case per kind: values as
 * an engine hands them to the encoders (NULL and the extremes among them), and what each format
 * must carry, written out here rather than computed by the encoders: what an Arrow reader decodes,
 * each CSV field, each JSON value's text. Shared by tests/arrow, tests/formats and tests/mcp.
 */
import { DataType, type Table, type Vector } from "apache-arrow";
import type { ColumnType } from "../../src/arrow/types.ts";

/**
 * A decoded value in one comparable form: int16/int32/date32 days numbers, floats their text
 * (`-0` and `NaN` kept apart), decimals their unscaled bigint, µs timestamps their bigint, blobs
 * their bytes as numbers, lists arrays of these, structs objects of these.
 */
export type Decoded = number | bigint | string | boolean | null | number[] | Decoded[] | { [member: string]: Decoded };

/** A float as comparable text: `-0` is not `0`, NaN is itself. */
export const floatKey = (x: number): string => (Object.is(x, -0) ? "-0" : String(x));

export interface KindCase {
  name: string;
  type: ColumnType;
  /** The Arrow type as apache-arrow prints it. */
  arrowType: string;
  /** Values as an engine hands them over. */
  values: unknown[];
  /** What a reader of the Arrow stream (or of the Parquet file, read into Arrow) decodes. */
  decoded: Decoded[];
  /** The CSV field of each value, as an RFC 4180 reader returns it (null: the empty field of NULL). */
  csv: (string | null)[];
  /** The text of each value in JSON and NDJSON. */
  json: string[];
}

const I64_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);
const D38 = 10n ** 38n - 1n;
const f32 = Math.fround;

/** Microsecond timestamps at the edges: the epoch, µs digits, before the epoch, years 1 and 9999, and int64's ends. */
const MICROS = [0n, 1_700_000_000_123_456n, -1n, 253_402_300_799_999_999n, -62_135_596_800_000_000n, I64_MAX, I64_MIN, null];
const MICROS_TEXT = [
  "1970-01-01T00:00:00.000000",
  "2023-11-14T22:13:20.123456",
  "1969-12-31T23:59:59.999999",
  "9999-12-31T23:59:59.999999",
  "0001-01-01T00:00:00.000000",
  "+294247-01-10T04:00:54.775807",
  "-290308-12-21T19:59:05.224192",
];

const quoted = (texts: (string | null)[]) => texts.map((text) => (text === null ? "null" : `"${text}"`));

export const KIND_CASES: KindCase[] = [
  {
    name: "int16",
    type: { kind: "int16" },
    arrowType: "Int16",
    values: [0, 1, -1, 32_767, -32_768, null, 12_345n, -0],
    decoded: [0, 1, -1, 32_767, -32_768, null, 12_345, 0],
    csv: ["0", "1", "-1", "32767", "-32768", null, "12345", "0"],
    json: ["0", "1", "-1", "32767", "-32768", "null", "12345", "0"],
  },
  {
    name: "int32",
    type: { kind: "int32" },
    arrowType: "Int32",
    values: [2_147_483_647, -2_147_483_648, 0, null, -5n, 70_000],
    decoded: [2_147_483_647, -2_147_483_648, 0, null, -5, 70_000],
    csv: ["2147483647", "-2147483648", "0", null, "-5", "70000"],
    json: ["2147483647", "-2147483648", "0", "null", "-5", "70000"],
  },
  {
    // Written as the shortest text that reads back to the same 32-bit float, as PostgreSQL prints a real.
    name: "float32",
    type: { kind: "float32" },
    arrowType: "Float32",
    values: [f32(3.14), 0.5, -0, f32(3.4028234663852886e38), f32(1e-45), Infinity, -Infinity, NaN, null, 16_777_216n, f32(1 / 3)],
    decoded: [f32(3.14), 0.5, -0, f32(3.4028234663852886e38), f32(1e-45), Infinity, -Infinity, NaN, null, 16_777_216, f32(1 / 3)].map((x) =>
      x === null ? null : floatKey(x),
    ),
    csv: ["3.14", "0.5", "-0", "3.4028235e+38", "1e-45", "Infinity", "-Infinity", "NaN", null, "16777216", "0.33333334"],
    json: ["3.14", "0.5", "-0", "3.4028235e+38", "1e-45", "1e999", "-1e999", "null", "null", "16777216", "0.33333334"],
  },
  {
    name: "decimal128(12,4)",
    type: { kind: "decimal128", precision: 12, scale: 4 },
    arrowType: "Decimal[12e+4]",
    values: [123_400n, -123_400n, 0n, -50n, 999_999_999_999n, -999_999_999_999n, null, 1n],
    decoded: [123_400n, -123_400n, 0n, -50n, 999_999_999_999n, -999_999_999_999n, null, 1n],
    csv: ["12.3400", "-12.3400", "0.0000", "-0.0050", "99999999.9999", "-99999999.9999", null, "0.0001"],
    json: quoted(["12.3400", "-12.3400", "0.0000", "-0.0050", "99999999.9999", "-99999999.9999", null, "0.0001"]),
  },
  {
    // Every digit of a 38-digit integer, across the 64-bit word boundary of the 128-bit value.
    name: "decimal128(38,0)",
    type: { kind: "decimal128", precision: 38, scale: 0 },
    arrowType: "Decimal[38e0]",
    values: [D38, -D38, 2n ** 64n, -(2n ** 64n), -1n, 2n ** 63n, null],
    decoded: [D38, -D38, 2n ** 64n, -(2n ** 64n), -1n, 2n ** 63n, null],
    csv: [String(D38), String(-D38), "18446744073709551616", "-18446744073709551616", "-1", "9223372036854775808", null],
    json: quoted([String(D38), String(-D38), "18446744073709551616", "-18446744073709551616", "-1", "9223372036854775808", null]),
  },
  {
    name: "decimal128(38,38)",
    type: { kind: "decimal128", precision: 38, scale: 38 },
    arrowType: "Decimal[38e+38]",
    values: [D38, -1n, 0n],
    decoded: [D38, -1n, 0n],
    csv: [`0.${"9".repeat(38)}`, `-0.${"0".repeat(37)}1`, `0.${"0".repeat(38)}`],
    json: quoted([`0.${"9".repeat(38)}`, `-0.${"0".repeat(37)}1`, `0.${"0".repeat(38)}`]),
  },
  {
    // Parquet keeps up to 9 digits in an INT32.
    name: "decimal128(9,2)",
    type: { kind: "decimal128", precision: 9, scale: 2 },
    arrowType: "Decimal[9e+2]",
    values: [999_999_999n, -999_999_999n, 0n, null, 5n],
    decoded: [999_999_999n, -999_999_999n, 0n, null, 5n],
    csv: ["9999999.99", "-9999999.99", "0.00", null, "0.05"],
    json: quoted(["9999999.99", "-9999999.99", "0.00", null, "0.05"]),
  },
  {
    // And up to 18 in an INT64.
    name: "decimal128(18,6)",
    type: { kind: "decimal128", precision: 18, scale: 6 },
    arrowType: "Decimal[18e+6]",
    values: [10n ** 18n - 1n, -(10n ** 18n - 1n), 123n, null],
    decoded: [10n ** 18n - 1n, -(10n ** 18n - 1n), 123n, null],
    csv: ["999999999999.999999", "-999999999999.999999", "0.000123", null],
    json: quoted(["999999999999.999999", "-999999999999.999999", "0.000123", null]),
  },
  {
    // A wall-clock time: no zone, so no Z.
    name: "timestamp_us",
    type: { kind: "timestamp_us" },
    arrowType: "Timestamp<MICROSECOND>",
    values: MICROS,
    decoded: MICROS,
    csv: [...MICROS_TEXT, null],
    json: quoted([...MICROS_TEXT, null]),
  },
  {
    name: "timestamp_us_utc",
    type: { kind: "timestamp_us_utc" },
    arrowType: "Timestamp<MICROSECOND, UTC>",
    values: MICROS,
    decoded: MICROS,
    csv: [...MICROS_TEXT.map((text) => `${text}Z`), null],
    json: quoted([...MICROS_TEXT.map((text) => `${text}Z`), null]),
  },
  {
    name: "list<int32>",
    type: { kind: "list", child: { kind: "int32" } },
    arrowType: "List<Int32>",
    values: [[1, 2, 3], [], null, [null], [2_147_483_647, -2_147_483_648, null]],
    decoded: [[1, 2, 3], [], null, [null], [2_147_483_647, -2_147_483_648, null]],
    csv: ["[1,2,3]", "[]", null, "[null]", "[2147483647,-2147483648,null]"],
    json: ["[1,2,3]", "[]", "null", "[null]", "[2147483647,-2147483648,null]"],
  },
  {
    name: "list<utf8>",
    type: { kind: "list", child: { kind: "utf8" } },
    arrowType: "List<Utf8>",
    values: [["a", "é😀"], [""], [null, 'q"uote,comma\n'], null, []],
    decoded: [["a", "é😀"], [""], [null, 'q"uote,comma\n'], null, []],
    csv: ['["a","é😀"]', '[""]', '[null,"q\\"uote,comma\\n"]', null, "[]"],
    json: ['["a","é😀"]', '[""]', '[null,"q\\"uote,comma\\n"]', "null", "[]"],
  },
  {
    // Nested: lists of lists, empty and NULL at both levels; int64 beyond 2^53 a string (DESIGN §16).
    name: "list<list<int64>>",
    type: { kind: "list", child: { kind: "list", child: { kind: "int64" } } },
    arrowType: "List<List<Int64>>",
    values: [[[1n], [2n, 3n]], [[], null, [null]], null, [], [[I64_MAX, -9_007_199_254_740_991n, I64_MIN]]],
    decoded: [[[1n], [2n, 3n]], [[], null, [null]], null, [], [[I64_MAX, -9_007_199_254_740_991n, I64_MIN]]],
    csv: ["[[1],[2,3]]", "[[],null,[null]]", null, "[]", '[["9223372036854775807",-9007199254740991,"-9223372036854775808"]]'],
    json: ["[[1],[2,3]]", "[[],null,[null]]", "null", "[]", '[["9223372036854775807",-9007199254740991,"-9223372036854775808"]]'],
  },
  {
    name: "list<decimal128(5,2)>",
    type: { kind: "list", child: { kind: "decimal128", precision: 5, scale: 2 } },
    arrowType: "List<Decimal[5e+2]>",
    values: [[12_345n, -1n, null, 0n], [-99_999n]],
    decoded: [[12_345n, -1n, null, 0n], [-99_999n]],
    csv: ['["123.45","-0.01",null,"0.00"]', '["-999.99"]'],
    json: ['["123.45","-0.01",null,"0.00"]', '["-999.99"]'],
  },
  {
    name: "list<timestamp_us_utc>",
    type: { kind: "list", child: { kind: "timestamp_us_utc" } },
    arrowType: "List<Timestamp<MICROSECOND, UTC>>",
    values: [[0n, null, 1_700_000_000_123_456n], [-1n]],
    decoded: [[0n, null, 1_700_000_000_123_456n], [-1n]],
    csv: ['["1970-01-01T00:00:00.000000Z",null,"2023-11-14T22:13:20.123456Z"]', '["1969-12-31T23:59:59.999999Z"]'],
    json: ['["1970-01-01T00:00:00.000000Z",null,"2023-11-14T22:13:20.123456Z"]', '["1969-12-31T23:59:59.999999Z"]'],
  },
  {
    name: "list<float32>",
    type: { kind: "list", child: { kind: "float32" } },
    arrowType: "List<Float32>",
    values: [[-0, Infinity, NaN, f32(0.1), null]],
    decoded: [["-0", "Infinity", "NaN", floatKey(f32(0.1)), null]],
    csv: ["[-0,1e999,null,0.1,null]"],
    json: ["[-0,1e999,null,0.1,null]"],
  },
  {
    // Dates as the other engines give them: days since 1970-01-01.
    name: "list<date32>",
    type: { kind: "list", child: { kind: "date32" } },
    arrowType: "List<Date32<DAY>>",
    values: [[0, 19_000, -1, null, "2024-02-29"]],
    decoded: [[0, 19_000, -1, null, 19_782]],
    csv: ['["1970-01-01","2022-01-08","1969-12-31",null,"2024-02-29"]'],
    json: ['["1970-01-01","2022-01-08","1969-12-31",null,"2024-02-29"]'],
  },
  {
    name: "list<bool>",
    type: { kind: "list", child: { kind: "bool" } },
    arrowType: "List<Bool>",
    values: [[true, false, null], [1n, 0n]],
    decoded: [[true, false, null], [true, false]],
    csv: ["[true,false,null]", "[true,false]"],
    json: ["[true,false,null]", "[true,false]"],
  },
  {
    name: "list<binary>",
    type: { kind: "list", child: { kind: "binary" } },
    arrowType: "List<Binary>",
    values: [[new Uint8Array([0xfb, 0xff]), new Uint8Array(0), null]],
    decoded: [[[0xfb, 0xff], [], null]],
    csv: ['["+/8=","",null]'],
    json: ['["+/8=","",null]'],
  },
  {
    // NULL at both levels: a NULL struct, and a struct of NULL members; int64 beyond 2^53 a string (DESIGN §16).
    name: "struct<a: int64, b: utf8>",
    type: { kind: "struct", fields: [{ name: "a", type: { kind: "int64" } }, { name: "b", type: { kind: "utf8" } }] },
    arrowType: "Struct<{a:Int64, b:Utf8}>",
    values: [{ a: 1n, b: "x" }, { a: null, b: null }, null, { a: I64_MAX, b: 'q"u,\n' }, { a: -9_007_199_254_740_991n, b: "" }],
    decoded: [{ a: 1n, b: "x" }, { a: null, b: null }, null, { a: I64_MAX, b: 'q"u,\n' }, { a: -9_007_199_254_740_991n, b: "" }],
    csv: ['{"a":1,"b":"x"}', '{"a":null,"b":null}', null, '{"a":"9223372036854775807","b":"q\\"u,\\n"}', '{"a":-9007199254740991,"b":""}'],
    json: ['{"a":1,"b":"x"}', '{"a":null,"b":null}', "null", '{"a":"9223372036854775807","b":"q\\"u,\\n"}', '{"a":-9007199254740991,"b":""}'],
  },
  {
    // Nested: a struct of a list and a struct, NULL and empty at each level.
    name: "struct<l: list<int32>, s: struct<d: decimal128(5,2)>>",
    type: {
      kind: "struct",
      fields: [
        { name: "l", type: { kind: "list", child: { kind: "int32" } } },
        { name: "s", type: { kind: "struct", fields: [{ name: "d", type: { kind: "decimal128", precision: 5, scale: 2 } }] } },
      ],
    },
    arrowType: "Struct<{l:List<Int32>, s:Struct<{d:Decimal[5e+2]}>}>",
    values: [{ l: [1, null], s: { d: 12_345n } }, { l: null, s: null }, { l: [], s: { d: null } }, null, { l: [-2_147_483_648], s: { d: -1n } }],
    decoded: [{ l: [1, null], s: { d: 12_345n } }, { l: null, s: null }, { l: [], s: { d: null } }, null, { l: [-2_147_483_648], s: { d: -1n } }],
    csv: ['{"l":[1,null],"s":{"d":"123.45"}}', '{"l":null,"s":null}', '{"l":[],"s":{"d":null}}', null, '{"l":[-2147483648],"s":{"d":"-0.01"}}'],
    json: ['{"l":[1,null],"s":{"d":"123.45"}}', '{"l":null,"s":null}', '{"l":[],"s":{"d":null}}', "null", '{"l":[-2147483648],"s":{"d":"-0.01"}}'],
  },
  {
    // Nested the other way: a list of structs, a NULL struct among its elements.
    name: "list<struct<x: float32, t: timestamp_us_utc>>",
    type: {
      kind: "list",
      child: {
        kind: "struct",
        fields: [
          { name: "x", type: { kind: "float32" } },
          { name: "t", type: { kind: "timestamp_us_utc" } },
        ],
      },
    },
    arrowType: "List<Struct<{x:Float32, t:Timestamp<MICROSECOND, UTC>}>>",
    values: [[{ x: -0, t: 0n }, null, { x: null, t: -1n }], [], null, [{ x: f32(0.1), t: null }]],
    decoded: [[{ x: "-0", t: 0n }, null, { x: null, t: -1n }], [], null, [{ x: floatKey(f32(0.1)), t: null }]],
    csv: ['[{"x":-0,"t":"1970-01-01T00:00:00.000000Z"},null,{"x":null,"t":"1969-12-31T23:59:59.999999Z"}]', "[]", null, '[{"x":0.1,"t":null}]'],
    json: ['[{"x":-0,"t":"1970-01-01T00:00:00.000000Z"},null,{"x":null,"t":"1969-12-31T23:59:59.999999Z"}]', "[]", "null", '[{"x":0.1,"t":null}]'],
  },
];

const int16: ColumnType = { kind: "int16" };
const int32: ColumnType = { kind: "int32" };
const float32: ColumnType = { kind: "float32" };
const decimal4: ColumnType = { kind: "decimal128", precision: 4, scale: 2 };
const micros: ColumnType = { kind: "timestamp_us" };
const microsUtc: ColumnType = { kind: "timestamp_us_utc" };

/** [type, value, detail]: values an engine could hand over that the kind cannot hold exactly. */
export const KIND_MISFITS: [ColumnType, unknown, string][] = [
  [int16, 32_768, "number 32768 is outside the 16-bit integer range"],
  [int16, -32_769, "number -32769 is outside the 16-bit integer range"],
  [int16, 2n ** 15n, "integer 32768 is outside the 16-bit integer range"],
  [int16, 1.5, "number 1.5 is not an integer"],
  [int16, "12", "text '12' is not an integer"],
  [int16, undefined, "a missing value is not an integer"],
  [int32, 2 ** 31, "number 2147483648 is outside the 32-bit integer range"],
  [int32, -(2n ** 31n) - 1n, "integer -2147483649 is outside the 32-bit integer range"],
  [int32, NaN, "number NaN is not an integer"],
  [int32, true, "boolean true is not an integer"],
  [float32, 0.1, "number 0.1 is not exactly a 32-bit float"],
  [float32, 1e39, "number 1e+39 is not exactly a 32-bit float"],
  [float32, 2n ** 24n + 1n, "integer 16777217 cannot be represented exactly as a 32-bit float"],
  [float32, "1.5", "text '1.5' is not a number"],
  [decimal4, 10_000n, "unscaled value 10000 has more than 4 digits: it does not fit decimal(4,2)"],
  [decimal4, -10_000n, "unscaled value -10000 has more than 4 digits: it does not fit decimal(4,2)"],
  [{ kind: "decimal128", precision: 38, scale: 0 }, 10n ** 38n, "unscaled value 100000000000000000000000000000000000000 has more than 38 digits: it does not fit decimal(38,0)"],
  [decimal4, 12.34, "number 12.34 is not a decimal's unscaled value (a bigint)"],
  [decimal4, "12.34", "text '12.34' is not a decimal's unscaled value (a bigint)"],
  [micros, 1_700_000_000_000_000, "number 1700000000000000 is not a timestamp in microseconds (a bigint)"],
  [micros, new Date(0), "a Date is not a timestamp in microseconds (a bigint)"],
  [microsUtc, "2024-01-01T00:00:00Z", "text '2024-01-01T00:00:00Z' is not a timestamp in microseconds (a bigint)"],
  [microsUtc, 2n ** 63n, "integer 9223372036854775808 is outside the 64-bit range"],
  [{ kind: "list", child: int16 }, "[1]", "text '[1]' is not a list"],
  [{ kind: "list", child: int16 }, {}, "an object is not a list"],
  [{ kind: "list", child: int16 }, [1, 40_000], "list element 1: number 40000 is outside the 16-bit integer range"],
  [{ kind: "list", child: { kind: "list", child: int32 } }, [[1], [2, "a"]], "list element 1: list element 1: text 'a' is not an integer"],
  [{ kind: "list", child: decimal4 }, [null, 10_000n], "list element 1: unscaled value 10000 has more than 4 digits: it does not fit decimal(4,2)"],
  [{ kind: "list", child: { kind: "utf8" } }, ["a", new Uint8Array(1)], "list element 1: blob of 1 byte is not text"],
  [{ kind: "list", child: microsUtc }, [1n, 2], "list element 1: number 2 is not a timestamp in microseconds (a bigint)"],
  [{ kind: "struct", fields: [{ name: "a", type: int16 }] }, [1], "a list of 1 value is not a struct"],
  [{ kind: "struct", fields: [{ name: "a", type: int16 }] }, '{"a":1}', `text '{"a":1}' is not a struct`],
  [{ kind: "struct", fields: [{ name: "a", type: int16 }] }, new Date(0), "a Date is not a struct"],
  [{ kind: "struct", fields: [{ name: "a", type: int16 }] }, {}, "struct member 'a': missing"],
  [{ kind: "struct", fields: [{ name: "a", type: int16 }, { name: "b", type: int32 }] }, { a: 1, b: 2 ** 31 }, "struct member 'b': number 2147483648 is outside the 32-bit integer range"],
  [{ kind: "struct", fields: [{ name: "s", type: { kind: "struct", fields: [{ name: "d", type: decimal4 }] } }] }, { s: { d: 10_000n } }, "struct member 's': struct member 'd': unscaled value 10000 has more than 4 digits: it does not fit decimal(4,2)"],
  [{ kind: "list", child: { kind: "struct", fields: [{ name: "a", type: int16 }] } }, [{ a: 1 }, { a: "x" }], "list element 1: struct member 'a': text 'x' is not an integer"],
  [{ kind: "struct", fields: [{ name: "l", type: { kind: "list", child: int16 } }] }, { l: [1, 40_000] }, "struct member 'l': list element 1: number 40000 is outside the 16-bit integer range"],
  // A number of days must be a 32-bit integer.
  [{ kind: "date32" }, 2 ** 31, "real 2147483648 is not an ISO-8601 date (YYYY-MM-DD)"],
  [{ kind: "date32" }, 1.5, "real 1.5 is not an ISO-8601 date (YYYY-MM-DD)"],
];

/** A value of a record batch's column (one Data chunk) in Decoded form, read from its buffers. */
export function decodeCell(type: DataType, vector: Vector, index: number): Decoded {
  if (!vector.isValid(index)) return null;
  // A sliced chunk (a List's elements) has its values sliced: `offset` counts only in the bitmap.
  const data = vector.data[0]!;
  const at = index;
  if (DataType.isDecimal(type)) {
    // bitWidth / 32 little-endian words, two's complement.
    const words = data.values as unknown as Uint32Array;
    const count = type.bitWidth / 32;
    let unscaled = 0n;
    for (let w = count - 1; w >= 0; w--) unscaled = (unscaled << 32n) | BigInt(words[at * count + w]!);
    return BigInt.asIntN(type.bitWidth, unscaled);
  }
  if (DataType.isTimestamp(type)) return (data.values as unknown as BigInt64Array)[at]!;
  if (DataType.isFloat(type)) return floatKey(vector.get(index) as number);
  if (DataType.isDate(type)) return (vector.get(index) as number) / 86_400_000;
  if (DataType.isBinary(type)) return [...(vector.get(index) as Uint8Array)];
  if (DataType.isList(type)) {
    const elements = vector.get(index) as Vector;
    return Array.from({ length: elements.length }, (_, j) => decodeCell(type.children[0]!.type, elements, j));
  }
  if (DataType.isStruct(type)) {
    return Object.fromEntries(type.children.map((field, m) => [field.name, decodeCell(field.type, vector.getChildAt(m)!, index)]));
  }
  return vector.get(index) as Decoded;
}

/** Column c of a table as Decoded values, batch by batch (each batch's column is one Data chunk). */
export function decodedValues(table: Table, c: number): Decoded[] {
  const type = table.schema.fields[c]!.type;
  return table.batches.flatMap((batch) => {
    const vector = batch.getChildAt(c)!;
    return Array.from({ length: batch.numRows }, (_, i) => decodeCell(type, vector, i));
  });
}
