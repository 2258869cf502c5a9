/**
 * The split-scan contract of the registry (ARCHITECTURE.md §9 "Formats"): for a concatenable format,
 * batches encoded by two independent encoders (two workers reading rowid ranges) and put in order
 * between one encoder's head and end are byte for byte what one encoder makes of all the rows.
 * Formats that are not concatenable are shown to need their single encoder.
 */
import { describe, expect, test } from "bun:test";
import type { Row } from "../../src/arrow/encode.ts";
import { concatBytes, encodeAll } from "../../src/formats/encoder.ts";
import { FORMATS } from "../../src/formats/registry.ts";
import { edgeFixture } from "./support.ts";

const fixture = edgeFixture();
const options = { rowKeys: fixture.rowKeys };

/** Ranges of rows handed alternately to two workers, as engines/sqlite/striped.ts does; firstRowIndex 0 each. */
function splitAcrossTwo(rows: Row[], rangeSize: number, formatIndex: number): Uint8Array {
  const format = FORMATS[formatIndex]!;
  const http = format.create(fixture.columns, options);
  const workers = [format.create(fixture.columns, options), format.create(fixture.columns, options)];
  const pieces = [http.head()];
  for (let first = 0, range = 0; first < rows.length; first += rangeSize, range++) {
    pieces.push(workers[range % 2]!.batch(rows.slice(first, first + rangeSize), 0));
  }
  pieces.push(http.end());
  return concatBytes(pieces);
}

const concatenable = FORMATS.flatMap((format, i) => (format.concatenable ? [[format.name, i] as const] : []));
const single = FORMATS.flatMap((format, i) => (format.concatenable ? [] : [[format.name, i] as const]));

test("the registry's split: Arrow, CSV and NDJSON concatenate; JSON and Parquet do not", () => {
  expect(concatenable.map(([name]) => name)).toEqual(["arrow", "csv", "ndjson"]);
  expect(single.map(([name]) => name)).toEqual(["json", "parquet"]);
});

describe.each(concatenable)("%s (concatenable)", (_, index) => {
  test.each([1, 2, 4])("two workers with ranges of %i rows = one encoder", (rangeSize) => {
    const one = encodeAll(FORMATS[index]!.create(fixture.columns, options), fixture.rows, rangeSize);
    expect(splitAcrossTwo(fixture.rows, rangeSize, index)).toEqual(one);
  });
});

// Arrow writes a zero-row record batch (valid, not empty); the split scan sends nothing for an
// empty range. The other formats write nothing for an empty batch.
test.each(FORMATS.filter((f) => f.name !== "arrow").map((f) => [f.name, f] as const))("%s: an empty batch is no bytes", (_, format) => {
  const encoder = format.create(fixture.columns, options);
  encoder.head();
  expect(encoder.batch([], 0).byteLength).toBe(0);
  encoder.batch(fixture.rows.slice(0, 2), 0);
  expect(encoder.batch([], 2).byteLength).toBe(0);
});

describe.each(single)("%s (not concatenable)", (_, index) => {
  test("independent encoders' batches do not make the single encoder's document", () => {
    const one = encodeAll(FORMATS[index]!.create(fixture.columns, options), fixture.rows, 2);
    expect(splitAcrossTwo(fixture.rows, 2, index)).not.toEqual(one);
  });
});
