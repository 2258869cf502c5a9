/**
 * Content negotiation (ARCHITECTURE.md §13, RFC 9110 §12.5.1): `Accept` and `?format=` → a format or a
 * 406 naming the formats the server can make.
 */
import { describe, expect, test } from "bun:test";
import { errorResponse, NotAcceptableError } from "../../src/errors.ts";
import { negotiateFormat, parseAccept } from "../../src/formats/negotiate.ts";
import { FORMATS } from "../../src/formats/registry.ts";

const chosen = (accept: string | null, format?: string | null): string | number => {
  const result = negotiateFormat(accept, format);
  return result instanceof NotAcceptableError ? 406 : result.name;
};

describe("Accept", () => {
  test.each([
    [null, "arrow"],
    ["", "arrow"],
    ["*/*", "arrow"],
    ["application/vnd.apache.arrow.stream", "arrow"],
    ["text/csv", "csv"],
    ["TEXT/CSV", "csv"],
    ["application/json", "json"],
    ["application/x-ndjson", "ndjson"],
    ["application/jsonl", "ndjson"],
    ["application/vnd.apache.parquet", "parquet"],
    ["application/x-parquet", "parquet"],
    ["text/*", "csv"],
    ["application/*", "arrow"],
    // A browser: nothing it names specifically is served, */* takes the default.
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "arrow"],
    // q-values.
    ["text/csv;q=0.5, application/json", "json"],
    ["application/json;q=0.2, text/csv;q=0.9", "csv"],
    ["application/vnd.apache.parquet;q=1.000, */*;q=0.1", "parquet"],
    // Equal q: named before wildcard, then the header's order.
    ["*/*, text/csv", "csv"],
    ["application/x-ndjson, text/csv", "ndjson"],
    ["text/csv, application/x-ndjson", "csv"],
    // The most specific range sets a format's q: arrow refused, the rest of */* stays.
    ["application/vnd.apache.arrow.stream;q=0, */*", "csv"],
    ["*/*;q=0.5, application/vnd.apache.arrow.stream;q=0.4", "csv"],
    ["text/*;q=0, */*;q=0.1", "arrow"],
    // Parameters.
    ["application/json; charset=utf-8", "json"],
    ["application/json; charset=UTF8", "json"],
    ['text/csv; charset="utf-8"; header=present', "csv"],
    ["text/csv; header=absent, application/json;q=0.1", "json"],
    ["text/csv; charset=iso-8859-1", 406],
    ["text/csv; charset=iso-8859-1, */*;q=0.1", "arrow"],
    ["application/json; indent=2", "json"], // unknown parameters are ignored
    ["text/csv;q=0.5;level=1", "csv"], // accept extensions after q
    ['text/csv;x="a,b;c", application/json;q=0.1', "csv"], // quoted commas and semicolons
    // Nothing servable.
    ["text/html", 406],
    ["image/png, text/plain", 406],
    ["text/csv;q=0", 406],
    ["*/*;q=0", 406],
    ["csv", 406],
    // Malformed ranges match nothing; the well-formed ones still count.
    ["text/csv;q=2, application/json", "json"],
    ["text/csv;q=abc", 406],
    ["*/csv, text/csv;q=0.5", "csv"],
    ["text/csv;noequals", 406],
    [",,, ,text/csv,", "csv"],
  ] as [string | null, string | number][])("%p → %p", (accept, expected) => {
    expect(chosen(accept)).toBe(expected);
  });
});

describe("?format=", () => {
  test.each([
    ["csv", "text/html", "csv"],
    ["PARQUET", null, "parquet"],
    [" ndjson ", "application/json", "ndjson"],
    ["arrow", "text/csv", "arrow"],
    ["", "text/csv", "csv"], // empty: as if absent
    [null, "text/csv", "csv"],
    ["xlsx", null, 406],
    ["text/csv", null, 406],
  ] as [string | null, string | null, string | number][])("%p with Accept %p → %p", (format, accept, expected) => {
    expect(chosen(accept, format)).toBe(expected);
  });
});

describe("406", () => {
  test("names every media type and every format name, and echoes the header safely", () => {
    const error = negotiateFormat(`text/html${"x".repeat(500)}\u0001`) as NotAcceptableError;
    expect(error).toBeInstanceOf(NotAcceptableError);
    expect(error.status).toBe(406);
    for (const format of FORMATS) {
      expect(error.message).toContain(format.mediaType);
      expect(error.message).toContain(format.name);
    }
    expect(error.message).not.toContain("\n");
    expect(error.message.length).toBeLessThan(400);
  });

  test("an unknown ?format= names the known ones", () => {
    const error = negotiateFormat(null, "xlsx") as NotAcceptableError;
    expect(error.message).toBe(
      "Unknown format 'xlsx': use ?format=arrow|csv|json|ndjson|parquet, or an Accept header with application/vnd.apache.arrow.stream, text/csv, application/json, application/x-ndjson or application/vnd.apache.parquet",
    );
  });

  test("errorResponse answers 406 text/plain with the message", async () => {
    const response = errorResponse(negotiateFormat("image/png"));
    expect(response.status).toBe(406);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await response.text()).toStartWith("None of the types in Accept 'image/png' can be served: ask for application/vnd.apache.arrow.stream");
  });
});

test("parseAccept reads parameters and weights", () => {
  expect(parseAccept('Text/CSV ; Charset="UTF-8" ; q=0.5 ; ext=1, */*')).toEqual([
    { type: "text", subtype: "csv", parameters: new Map([["charset", "UTF-8"]]), q: 0.5 },
    { type: "*", subtype: "*", parameters: new Map(), q: 1 },
  ]);
});
