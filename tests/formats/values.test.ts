/**
 * ISO-8601 text of dates and timestamps (checked against JavaScript's Date where it reaches), and
 * the plain JSON values an MCP result carries: the same text as the JSON format once stringified.
 */
import { describe, expect, test } from "bun:test";
import { ValueDoesNotFit } from "../../src/arrow/encode.ts";
import { encodeAll } from "../../src/formats/encoder.ts";
import { isoDate, isoTimestamp } from "../../src/formats/iso.ts";
import { createJsonValues } from "../../src/formats/json-values.ts";
import { createNdjsonEncoder } from "../../src/formats/json.ts";
import { seededRandom } from "../arrow/support.ts";
import { edgeFixture } from "./support.ts";

describe("ISO-8601", () => {
  test("timestamps agree with Date#toISOString across its range, by both code paths", () => {
    const random = seededRandom(11);
    for (let i = 0; i < 5000; i++) {
      const ms = Math.round((random() * 2 - 1) * 8.64e15);
      const expected = new Date(ms).toISOString();
      expect(isoTimestamp(ms)).toBe(expected);
      expect(isoTimestamp(BigInt(ms))).toBe(expected); // the path for values beyond Date's range
    }
  });

  test("dates agree with Date for days from year 0 to 9999", () => {
    const random = seededRandom(12);
    for (let i = 0; i < 5000; i++) {
      const days = Math.floor(random() * 3_652_425) - 719_528;
      expect(isoDate(days)).toBe(new Date(days * 86_400_000).toISOString().slice(0, 10));
    }
  });

  test.each([
    [2n ** 63n - 1n, "+292278994-08-17T07:12:55.807Z"],
    [-(2n ** 63n), "-292275055-05-16T16:47:04.192Z"],
    [8_640_000_000_000_001, "+275760-09-13T00:00:00.001Z"],
    [-1, "1969-12-31T23:59:59.999Z"],
  ] as [number | bigint, string][])("beyond Date's range: %p → %s", (ms, text) => {
    expect(isoTimestamp(ms)).toBe(text);
  });
});

describe("JSON values for MCP", () => {
  const fixture = edgeFixture();
  const toValues = createJsonValues(fixture.columns, { rowKeys: fixture.rowKeys });

  test("JSON.stringify of a row's values is the JSON format's text of them", () => {
    const lines = new TextDecoder().decode(encodeAll(createNdjsonEncoder(fixture.columns, { rowKeys: fixture.rowKeys }), fixture.rows)).trimEnd().split("\n");
    const values = toValues(fixture.rows);
    expect(values.length).toBe(fixture.rows.length);
    values.forEach((row, r) => {
      const object = fixture.columns.map((column, c) => `${JSON.stringify(column.name)}:${JSON.stringify(row[c])}`).join(",");
      expect(`{${object}}`).toBe(lines[r]!);
    });
  });

  test("plain values where JSON has them; int64 beyond 2^53 a string of its digits", () => {
    const [first, second, third, fourth, fifth, sixth] = toValues(fixture.rows);
    expect(first!.slice(0, 8)).toEqual([1, 0, 0, "", "", false, "1970-01-01", "1970-01-01T00:00:00.000Z"]);
    expect([second![1], third![1], fourth![1], fifth![1], sixth![1]]).toEqual(["9223372036854775807", "-9223372036854775808", "9007199254740993", "-9007199254740993", 123]);
    expect(toValues([fixture.rows[7]!])[0]!.slice(1)).toEqual(Array(8).fill(null));
  });

  test("misfits throw as every encoder does, at the row's place in the result", () => {
    const values = createJsonValues([{ name: "n", kind: "int64", nullable: true }]);
    expect(() => values([[1n], ["x"]], 10)).toThrow(ValueDoesNotFit);
    try {
      values([[1n], ["x"]], 10);
    } catch (error) {
      expect((error as ValueDoesNotFit).rowIndex).toBe(11);
    }
  });
});
