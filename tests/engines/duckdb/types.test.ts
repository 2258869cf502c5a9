/**
 * DuckDB's declared types → column types (DESIGN.md §14, engines/duckdb/types.ts), as
 * information_schema.columns writes them: STRUCT members mapped by the same rules, recursively
 * (lists of structs, structs of lists and of structs), quoted member names read back; a struct or
 * list with a member that would need a cast, MAP and UNION are the Utf8 of their text.
 */
import { describe, expect, test } from "bun:test";
import { mapDuckType, selectExpression, type DuckColumnType, type DuckMapped } from "../../../src/engines/duckdb/types.ts";

const int32: DuckColumnType = { kind: "int32" };
const utf8: DuckColumnType = { kind: "utf8" };
const TEXT: DuckMapped = { type: utf8, read: "text" };

describe("mapDuckType", () => {
  test.each([
    ["STRUCT(a INTEGER, b VARCHAR)", { kind: "struct", fields: [{ name: "a", type: int32 }, { name: "b", type: utf8 }] }],
    ['STRUCT("b c" VARCHAR, "select" DECIMAL(10,2), "q""" BIGINT, "a,b" INTEGER)', {
      kind: "struct",
      fields: [
        { name: "b c", type: utf8 },
        { name: "select", type: { kind: "decimal128", precision: 10, scale: 2 } },
        { name: 'q"', type: { kind: "int64" } },
        { name: "a,b", type: int32 },
      ],
    }],
    ["STRUCT(l INTEGER[], s STRUCT(x DOUBLE, t TIMESTAMP WITH TIME ZONE))", {
      kind: "struct",
      fields: [
        { name: "l", type: { kind: "list", child: int32 } },
        { name: "s", type: { kind: "struct", fields: [{ name: "x", type: { kind: "float64" } }, { name: "t", type: { kind: "timestamp_us_utc" } }] } },
      ],
    }],
    ["STRUCT(k VARCHAR)[]", { kind: "list", child: { kind: "struct", fields: [{ name: "k", type: utf8 }] } }],
    ["STRUCT(k STRUCT(n HUGEINT)[])[]", { kind: "list", child: { kind: "struct", fields: [{ name: "k", type: { kind: "list", child: { kind: "struct", fields: [{ name: "n", type: { kind: "decimal128", precision: 38, scale: 0 } }] } } }] } }],
    // TIMESTAMP_NS is read as it is (values.ts refuses a finer part), so it may be a member.
    ["STRUCT(t TIMESTAMP_NS, b BLOB)", { kind: "struct", fields: [{ name: "t", type: { kind: "timestamp_us" } }, { name: "b", type: { kind: "binary" } }] }],
  ] as [string, DuckColumnType][])("%s", (dataType, type) => {
    expect(mapDuckType(dataType)).toEqual({ type, read: "value" });
    expect(selectExpression("s", mapDuckType(dataType))).toBe('"s"');
  });

  test.each([
    // Members that would need a cast: the whole value is read as its text, as a list's is.
    "STRUCT(t TIMESTAMP_S)",
    "STRUCT(a INTEGER, u UUID)",
    "STRUCT(i INTERVAL)",
    "STRUCT(m MAP(VARCHAR, INTEGER))",
    "STRUCT(a INTEGER)[3]",
    "MAP(VARCHAR, INTEGER)",
    "MAP(VARCHAR, STRUCT(a INTEGER))",
    "UNION(i INTEGER, s VARCHAR)",
    // @duckdb/node-api loses a member of this name (it gathers members in a plain object).
    "STRUCT(__proto__ INTEGER, a INTEGER)",
    // Not the shape DuckDB writes: never guessed at.
    "STRUCT()",
    "STRUCT(a)",
    'STRUCT("a INTEGER)',
  ])("%s: Utf8 of its text", (dataType) => {
    expect(mapDuckType(dataType)).toEqual(TEXT);
    expect(selectExpression("s", mapDuckType(dataType))).toBe('CAST("s" AS VARCHAR) AS "s"');
  });
});
