/**
 * JSON (one array of row objects) and NDJSON (one object per line). Int64 values are written as
 * JSON numbers with every digit (JSON allows any precision; readers that parse into doubles
 * should read them as big integers). No control character is written raw, names included: the
 * ones JSON.stringify leaves (C1 controls, bidirectional overrides) become `\uXXXX` escapes,
 * which decode to the same values (DESIGN §17).
 */
import { printableJson } from "../printable.ts";
import { cellJson } from "./cells.ts";
import type { DecodedResult } from "./rows.ts";

function* rowObjects(result: DecodedResult): Generator<string> {
  const keys = result.columns.map((column) => JSON.stringify(column.name));
  for (const row of result.rows()) {
    yield printableJson(`{${row.map((value, index) => `${keys[index]}:${cellJson(result.columns[index]!.kind, value)}`).join(",")}}`);
  }
}

export function* jsonChunks(result: DecodedResult): Generator<string> {
  let first = true;
  yield "[";
  for (const object of rowObjects(result)) {
    yield (first ? "\n" : ",\n") + object;
    first = false;
  }
  yield first ? "]\n" : "\n]\n";
}

export function* ndjsonChunks(result: DecodedResult): Generator<string> {
  for (const object of rowObjects(result)) yield object + "\n";
}
