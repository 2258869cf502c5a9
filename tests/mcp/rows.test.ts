/**
 * The rows of an MCP query result (src/mcp/rows.ts) are read back from the Arrow stream the query
 * service delivers; they must be the JSON format's values of the same SQLite rows
 * (formats/json-values.ts), whatever the batching, with int64 digits exact (strings beyond 2^53).
 */
import { describe, expect, test } from "bun:test";
import { createStreamEncoder } from "../../src/arrow/encode.ts";
import { createJsonValues } from "../../src/formats/json-values.ts";
import { queryRows } from "../../src/mcp/rows.ts";
import { arrowTypeFor } from "../../src/arrow/types.ts";
import { edgeFixture } from "../formats/support.ts";

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
