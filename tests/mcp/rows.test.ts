/**
 * The rows of an MCP query result (src/mcp/rows.ts) are read back from the Arrow stream the query
 * service delivers; they must be the JSON format's values of the same SQLite rows
 * (formats/json-values.ts), whatever the batching, with int64 digits exact (strings beyond 2^53).
 * Types the SQLite engine never makes (Decimal, Uint64) are read from Arrow tables built here.
 */
import { describe, expect, test } from "bun:test";
import { Decimal, makeData, makeVector, Table, tableToIPC, Uint64, vectorFromArray, type Vector } from "apache-arrow";
import { createStreamEncoder, type EncoderColumn } from "../../src/arrow/encode.ts";
import { createJsonValues } from "../../src/formats/json-values.ts";
import { queryRows } from "../../src/mcp/rows.ts";
import { arrowTypeFor } from "../../src/arrow/types.ts";
import { edgeFixture } from "../formats/support.ts";
import { KIND_CASES } from "../arrow/kind-cases.ts";

const fixture = edgeFixture();
const options = { rowKeys: fixture.rowKeys };

/** The fixture's rows as an Arrow IPC stream in batches of `size` rows, as the workers send it. */
function stream(size: number): Uint8Array[] {
  const encoder = createStreamEncoder(fixture.columns, options);
  const chunks = [encoder.schemaMessage()];
  for (let first = 0; first < fixture.rows.length; first += size) chunks.push(encoder.batchMessage(fixture.rows.slice(first, first + size), first));
  chunks.push(encoder.endMessage());
  return chunks;
}

describe("Arrow stream → MCP rows", () => {
  const expected = JSON.stringify(createJsonValues(fixture.columns, options)(fixture.rows));

  test.each([1, 2, 4, 100])("batches of %p rows give the JSON format's values, exactly", async (size) => {
    const result = await queryRows({ complete: stream(size), rows: fixture.rows.length });
    expect(JSON.stringify(result.rows)).toBe(expected);
    expect(result.row_count).toBe(fixture.rows.length);
    expect(result.columns).toEqual(fixture.columns.map((column) => ({ name: column.name, type: arrowTypeFor(column.kind).toString() })));
  });

  test("a streamed body reads the same as buffered chunks", async () => {
    const chunks = stream(3);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    expect(JSON.stringify((await queryRows({ body })).rows)).toBe(expected);
  });

  test("the edge values as an agent reads them", async () => {
    const { rows } = await queryRows({ complete: stream(4), rows: fixture.rows.length });
    const text = (r: number) => JSON.stringify(rows[r]);
    // int64 beyond 2^53 is a string of its digits (DESIGN §16); ±Infinity keep the JSON format's
    // text; blobs are base64.
    expect(text(1)).toStartWith('[2,"9223372036854775807",1.5,"plain","AP8Q",true,"2024-02-29","2024-02-29T23:59:59.999Z"');
    expect(text(2)).toStartWith('[3,"-9223372036854775808",');
    expect(text(3)).toStartWith('[4,"9007199254740993",1e+300,');
    expect(text(4)).toContain('"-9007199254740993",1e999,');
    expect(text(5)).toStartWith("[6,123,");
    expect(text(5)).toContain(",-1e999,");
    expect(text(7)).toBe(`[8,${Array(8).fill("null").join(",")}]`);
  });

  test("an empty result has its columns and no rows", async () => {
    const encoder = createStreamEncoder(fixture.columns, options);
    const result = await queryRows({ complete: [encoder.schemaMessage(), encoder.endMessage()], rows: 0 });
    expect(result).toEqual({ columns: expect.any(Array), rows: [], row_count: 0 });
    expect(result.columns).toHaveLength(fixture.columns.length);
  });
});

/** A Decimal column of unscaled values, as an engine's Arrow stream carries it: little-endian words, two's complement. */
function decimalVector(type: Decimal, values: (bigint | null)[]): Vector {
  const words = type.bitWidth / 32;
  const data = new Uint32Array(values.length * words);
  const valid = new Uint8Array(Math.ceil(values.length / 8));
  values.forEach((value, i) => {
    if (value === null) return;
    valid[i >> 3]! |= 1 << (i & 7);
    for (let w = 0; w < words; w++) data[i * words + w] = Number(BigInt.asUintN(32, value >> (32n * BigInt(w))));
  });
  const nullCount = values.filter((value) => value === null).length;
  return makeVector(makeData({ type, length: values.length, nullCount, nullBitmap: valid, data }));
}

/** A one-column Arrow table's rows as an agent reads them: the JSON text, parsed. */
async function agentReads(vector: Vector): Promise<{ type: string; values: unknown[] }> {
  const result = await queryRows({ complete: [tableToIPC(new Table({ v: vector }), "stream")], rows: vector.length });
  return { type: result.columns[0]!.type, values: (JSON.parse(JSON.stringify(result)) as { rows: unknown[][] }).rows.map((row) => row[0]) };
}

const I128_MAX = 2n ** 127n - 1n;

describe("Arrow types of other engines → MCP rows", () => {
  test.each([
    ["numeric(12,4)", new Decimal(4, 12, 128), [123456700n, -123456700n, -50n, 1n, 0n, null], ["12345.6700", "-12345.6700", "-0.0050", "0.0001", "0.0000", null]],
    ["HUGEINT as Decimal128(38,0)", new Decimal(0, 38, 128), [I128_MAX, -I128_MAX - 1n, 5n, -1n, 0n], [String(I128_MAX), String(-I128_MAX - 1n), "5", "-1", "0"]],
    ["a negative scale", new Decimal(-2, 5, 128), [123n, -4n, 0n], ["12300", "-400", "0"]],
    ["Decimal256(76,10)", new Decimal(10, 76, 256), [-(2n ** 255n), 1n], ["-5789604461865809771178549250434395392663499233282028201972879200395.6564819968", "0.0000000001"]],
  ] as [string, Decimal, (bigint | null)[], (string | null)[]][])("%s: a string of the exact digits at the column's scale", async (_name, type, unscaled, seen) => {
    const read = await agentReads(decimalVector(type, unscaled));
    expect(read.type).toBe(type.toString());
    expect(read.values).toEqual(seen);
  });

  test("Uint64: a number while it is a safe integer, a string of its digits beyond", async () => {
    const read = await agentReads(vectorFromArray([2n ** 64n - 1n, 2n ** 53n, 2n ** 53n - 1n, 5n, null], new Uint64()));
    expect(read.values).toEqual(["18446744073709551615", "9007199254740992", 9007199254740991, 5, null]);
  });
});

describe("the other engines' kinds (DESIGN §14) → MCP rows", () => {
  test.each(KIND_CASES)("$name: each value as the JSON format writes it, whatever the batching", async ({ type, arrowType, values, json }) => {
    const columns: EncoderColumn[] = [{ name: "v", ...type, nullable: true }];
    const rows = values.map((value) => [value]);
    const encoder = createStreamEncoder(columns);
    const chunks = [encoder.schemaMessage()];
    for (let first = 0; first < rows.length; first += 2) chunks.push(encoder.batchMessage(rows.slice(first, first + 2), first));
    chunks.push(encoder.endMessage());
    const result = await queryRows({ complete: chunks, rows: rows.length });
    expect(result.columns).toEqual([{ name: "v", type: arrowType }]);
    expect(result.rows.map(([cell]) => JSON.stringify(cell))).toEqual(json);
    expect(JSON.stringify(result.rows)).toBe(JSON.stringify(createJsonValues(columns)(rows)));
  });
});
