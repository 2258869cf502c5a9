/**
 * Output formats on a real Arrow stream: the server over the types fixture (one column per Arrow
 * type of ARCHITECTURE.md §5, int64 at both ends of its range, blobs, nulls, dates and timestamps),
 * rendered as the CLI does, from the body written to a file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Table, tableFromIPC, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import { ARROW_STREAM, defaultFormat, FORMATS, isBinary, mediaTypeFor, PARQUET, render, type OutputFormat, type RenderOptions } from "../../src/client/format/index.ts";
import { MAX_CELL_WIDTH } from "../../src/client/format/text-table.ts";
import { formatNamed } from "../../src/formats/registry.ts";
import { readParquetIndependently } from "../formats/support.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";

const dir = tempDir("arrow402-client-formats-");
let server: RunningServer;
let kinds: Uint8Array;
let empty: Uint8Array;
let kindsParquet: Uint8Array;
let emptyParquet: Uint8Array;

async function arrowOf(sql: string, accept = ARROW_STREAM): Promise<Uint8Array> {
  const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { accept } });
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

beforeAll(async () => {
  createTypesDatabase(join(dir, "types.sqlite"));
  server = await startServer(typesConfig(dir), { workers: 1 });
  kinds = await arrowOf("SELECT * FROM kinds ORDER BY id");
  empty = await arrowOf("SELECT id, label FROM kinds WHERE id > 100");
  kindsParquet = await arrowOf("SELECT * FROM kinds ORDER BY id", PARQUET);
  emptyParquet = await arrowOf("SELECT id, label FROM kinds WHERE id > 100", PARQUET);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A one-column Utf8 stream written by apache-arrow itself, for values the fixture lacks. */
function textStream(column: string, values: string[]): Uint8Array {
  return tableToIPC(new Table({ [column]: vectorFromArray(values, new Utf8()) }), "stream");
}

let bodies = 0;

/** The body written to a file, as the CLI receives it, then rendered. */
function renderBody(format: OutputFormat, bytes: Uint8Array, options: RenderOptions = {}) {
  const path = join(dir, `body-${++bodies}`);
  writeFileSync(path, bytes);
  return render(format, path, options);
}

async function text(format: OutputFormat, bytes: Uint8Array, options: RenderOptions = {}): Promise<string> {
  const chunks = [...(await renderBody(format, bytes, options)).chunks];
  return chunks.map((chunk) => (typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk))).join("");
}

function bytesOf(chunks: Iterable<string | Uint8Array>): Uint8Array {
  return Buffer.concat([...chunks].map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
}

const HEADER = "id,big,label,note,data,score,ok,day,at,stamp,anything";

describe("csv", () => {
  test("every value exact: int64 digits, hex blobs, ISO dates and timestamps; null empty, '' quoted", async () => {
    expect((await text("csv", kinds)).split("\n")).toEqual([
      HEADER,
      "1,9007199254740993,alpha,first,010203,1.5,true,2026-01-31,2026-01-31T12:34:56.000Z,2026-01-01T00:00:00.000Z,x",
      '2,-9223372036854775808,béta ✓,"","",-0.25,false,1999-12-31,2026-01-31T12:34:56.789Z,2026-01-31T22:00:00.000Z,42',
      "3,,,,,,,,,,",
      "4,9223372036854775807,gamma,third,ff,1e+300,true,2000-02-29,1970-01-01T00:00:00.000Z,1970-01-01T00:00:00.000Z,2.5",
      "",
    ]);
  });

  test("quotes commas, quotes and line breaks", async () => {
    expect(await text("csv", textStream("a,\"b\"", ['x,y', 'say "hi"', "two\nlines", "plain"]))).toBe(
      '"a,""b"""\n"x,y"\n"say ""hi"""\n"two\nlines"\nplain\n',
    );
  });

  test("an empty result is the header alone", async () => {
    expect(await text("csv", empty)).toBe("id,label\n");
  });
});

describe("json and ndjson", () => {
  test("int64 as numbers with every digit, nulls as null", async () => {
    const json = await text("json", kinds);
    expect(json).toContain('"big":9007199254740993,');
    expect(json).toContain('"big":-9223372036854775808,');
    expect(json).toContain('"big":9223372036854775807,');
    const rows = JSON.parse(json) as Record<string, unknown>[];
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({ id: 1, label: "alpha", data: "010203", score: 1.5, ok: true, day: "2026-01-31", at: "2026-01-31T12:34:56.000Z" });
    expect(rows[2]).toEqual({ id: 3, big: null, label: null, note: null, data: null, score: null, ok: null, day: null, at: null, stamp: null, anything: null });
    expect(rows[1]).toMatchObject({ note: "", data: "", ok: false });
  });

  test("ndjson is the same objects, one per line", async () => {
    const lines = (await text("ndjson", kinds)).trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line))).toEqual(JSON.parse(await text("json", kinds)));
  });

  test("an empty result", async () => {
    expect(JSON.parse(await text("json", empty))).toEqual([]);
    expect(await text("ndjson", empty)).toBe("");
  });
});

describe("table", () => {
  test("aligned columns, numbers to the right, nulls blank, a row count", async () => {
    const lines = (await text("table", kinds)).trimEnd().split("\n");
    expect(lines[0]!.split(/\s+/)).toEqual(HEADER.split(","));
    expect(lines).toHaveLength(4 + 3);
    expect(lines.at(-1)).toBe("(4 rows)");
    // "id" and "big" are numbers, right-aligned under their headers; text is left-aligned.
    expect(lines[2]!.startsWith(" 1      9007199254740993  alpha   first  010203     1.5  true ")).toBe(true);
    expect(lines[4]).toBe(" 3");
    expect(lines[5]!.startsWith(" 4   9223372036854775807  gamma   third  ff      1e+300  true ")).toBe(true);
  });

  test("long values are cut for reading, line breaks flattened; other formats keep them whole", async () => {
    const long = "x".repeat(MAX_CELL_WIDTH + 40);
    const bytes = textStream("value", [long, "a\nb"]);
    const lines = (await text("table", bytes)).split("\n");
    expect(lines[2]).toBe("x".repeat(MAX_CELL_WIDTH - 1) + "…");
    expect(lines[3]!.trimEnd()).toBe("a b");
    expect(await text("csv", bytes)).toContain(long);
  });
});

describe("control characters from the server (DESIGN §17)", () => {
  const HOSTILE = ["\x1b[1A\x1b[2K", "\x1b]52;c;cHduZWQ=\x07", "\u009b2J", "\rover", "\u202eabc", "tab\there\nline"];
  const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
  const stream = () => textStream("name\x1b[2K", HOSTILE);

  test("csv: shown as visible escapes, tabs and line feeds kept in quoted fields", async () => {
    const csv = await text("csv", stream());
    expect(csv).not.toMatch(UNSAFE);
    expect(csv.split("\n").slice(0, 6)).toEqual([
      "name\\u{1b}[2K",
      "\\u{1b}[1A\\u{1b}[2K",
      "\\u{1b}]52;c;cHduZWQ=\\u{7}",
      "\\u{9b}2J",
      "\\u{d}over",
      "\\u{202e}abc",
    ]);
    expect(csv).toContain('"tab\there\nline"');
  });

  test("csv for a regular file: every value exact", async () => {
    const csv = await text("csv", stream(), { exact: true });
    expect(csv).toContain("name\x1b[2K\n");
    for (const value of HOSTILE.slice(0, 3)) expect(csv).toContain(`${value}\n`);
  });

  test.each(["json", "ndjson"] as const)("%s: escaped as JSON, the values read back exactly", async (format) => {
    const json = await text(format, stream(), { exact: true });
    expect(json).not.toMatch(UNSAFE);
    const rows = (format === "json" ? JSON.parse(json) : json.trimEnd().split("\n").map((line) => JSON.parse(line))) as Record<string, string>[];
    expect(rows.map((row) => row["name\x1b[2K"])).toEqual(HOSTILE);
  });

  test("table: names and values shown as visible escapes, line breaks as spaces, widths counted on what is shown", async () => {
    const lines = (await text("table", stream())).split("\n");
    expect(lines.join("\n")).not.toMatch(UNSAFE);
    expect(lines[0]).toBe("name\\u{1b}[2K");
    expect(lines[1]).toBe("─".repeat("\\u{1b}]52;c;cHduZWQ=\\u{7}".length));
    expect(lines.slice(2, 8).map((line) => line.trimEnd())).toEqual([
      "\\u{1b}[1A\\u{1b}[2K",
      "\\u{1b}]52;c;cHduZWQ=\\u{7}",
      "\\u{9b}2J",
      " over",
      "\\u{202e}abc",
      "tab here line",
    ]);
  });
});

describe("arrow", () => {
  test("the server's bytes, unchanged, and counted", async () => {
    const rendered = await renderBody("arrow", kinds);
    expect(rendered.rowCount).toBe(4);
    const bytes = bytesOf(rendered.chunks);
    expect(bytes).toEqual(Buffer.from(kinds));
    expect(tableFromIPC(bytes).numRows).toBe(4);
  });

  test("a body that is not an Arrow stream is an error, not an empty result", async () => {
    await expect(renderBody("csv", new TextEncoder().encode("Internal server error"))).rejects.toThrow();
  });
});

describe("parquet", () => {
  test("the server's file, unchanged, and counted from its footer", async () => {
    const rendered = await renderBody("parquet", kindsParquet);
    expect(rendered.rowCount).toBe(4);
    const bytes = bytesOf(rendered.chunks);
    expect(bytes).toEqual(Buffer.from(kindsParquet));
    const read = readParquetIndependently(bytes);
    expect(read.numRows).toBe(4);
    expect([...read.getChild("big")!]).toEqual([9007199254740993n, -9223372036854775808n, null, 9223372036854775807n]);
  });

  test("an empty result is a file with no rows", async () => {
    expect((await renderBody("parquet", emptyParquet)).rowCount).toBe(0);
  });

  test.each([
    ["an Arrow stream", () => kinds, "does not start with the Parquet magic"],
    ["text", () => new TextEncoder().encode("Internal server error, please retry"), "does not start with the Parquet magic"],
    ["a file cut short", () => kindsParquet.subarray(0, kindsParquet.byteLength - 100), "footer != PAR1"],
    ["nothing", () => new Uint8Array(), "does not start with the Parquet magic"],
  ])("%s is an error, never written as Parquet", async (_name, body, message) => {
    await expect(renderBody("parquet", body())).rejects.toThrow(message);
  });
});

test("arrow and parquet are asked of the server by the media types it serves; the rest come from Arrow", async () => {
  expect(mediaTypeFor("parquet")).toBe(formatNamed("parquet")!.mediaType);
  for (const format of FORMATS.filter((f) => f !== "parquet")) expect(mediaTypeFor(format)).toBe(formatNamed("arrow")!.mediaType);
  expect(FORMATS.filter(isBinary)).toEqual(["arrow", "parquet"]);
});

test("default format: a file's extension, else a table on a terminal and Arrow when piped", async () => {
  expect(defaultFormat("swaps.parquet", true)).toBe("parquet");
  expect(defaultFormat(null, true)).toBe("table");
  expect(defaultFormat(null, false)).toBe("arrow");
  expect(defaultFormat("out.CSV", true)).toBe("csv");
  expect(defaultFormat("rows.jsonl", false)).toBe("ndjson");
  expect(defaultFormat("data.bin", true)).toBe("arrow");
});
