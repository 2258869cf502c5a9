/**
 * A real SQLite file holding edge values of every column kind, read the way the query worker reads
 * it, and independent readers for every format: an RFC 4180 CSV parser written here, a JSON parse
 * that keeps integer digits, and parquet-wasm (arrow-rs, not the writer's library) for Parquet.
 * Values are compared in one canonical form: int64 and timestamps as bigint (ms), dates as days,
 * floats as numbers, text as strings, blobs as bytes, booleans, null.
 */
import { Database } from "bun:sqlite";
import { tempDir } from "../support/fixtures.ts";
import { join } from "node:path";
import { tableFromIPC, type Table } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import type { EncoderColumn, Row } from "../../src/arrow/encode.ts";
import type { ArrowKind } from "../../src/arrow/types.ts";
import { arrowKindFor } from "../../src/arrow/types.ts";

export const EDGE_TABLE = `CREATE TABLE edge (
  id INTEGER PRIMARY KEY, i INTEGER, f REAL, s TEXT, b BLOB, ok BOOLEAN, d DATE, ts TIMESTAMP, u
)`;

/** Rows as SQL literals (so REAL stays REAL and blobs stay blobs); every column meets NULL somewhere. */
export const EDGE_ROWS = [
  "1, 0, 0.0, '', X'', 0, '1970-01-01', '1970-01-01T00:00:00Z', ''",
  "2, 9223372036854775807, 1.5, 'plain', X'00FF10', 1, '2024-02-29', '2024-02-29 23:59:59.999', 'untyped'",
  "3, -9223372036854775808, -2.5e-300, 'quote \" and , comma', X'DEADBEEF', 1, '0001-01-01', '2024-01-01T10:00:00+05:30', 42",
  "4, 9007199254740993, 1e300, 'line' || char(10) || 'break' || char(13) || char(10) || 'end', zeroblob(0), 0, '9999-12-31', 1700000000, 1.5",
  "5, -9007199254740993, 9e999, 'héllo 🌍 中文 ''single''', X'2B2F3D', 0, '2000-01-01', 1700000000.25, 2.0",
  "6, 123, -9e999, '=SUM(A1:A9)', X'FB', 1, '1999-12-31', '2024-03-10 02:30', 'a,b'",
  "7, -1, 0.1, ' spaced ', X'0102', 0, '2024-12-31', -86400, '\"'",
  "8, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
  "9, 2, 123.0, 'tab\tand\\backslash', X'00', 1, '1970-01-02', '2030-06-15T12:00:00.000Z', NULL",
];

export interface Fixture {
  path: string;
  columns: EncoderColumn[];
  /** Rows as `stmt.iterate()` gives them, and the statement's output names. */
  rows: Row[];
  rowKeys: string[];
}

export function tempPath(name: string): string {
  return join(tempDir("arrow402-formats-"), name);
}

/** A database file made with `create` statements, then read back read-only with safeIntegers. */
export function sqliteFile(statements: string[]): string {
  const path = tempPath("test.sqlite");
  const db = new Database(path, { create: true });
  db.run("PRAGMA synchronous = OFF"); // test files need no durability
  db.transaction(() => {
    for (const sql of statements) db.run(sql);
  })();
  db.close();
  return path;
}

export function readRows(path: string, sql: string): { rows: Row[]; rowKeys: string[] } {
  const db = new Database(path, { readonly: true, safeIntegers: true });
  const stmt = db.prepare(sql);
  const rows = [...(stmt.iterate() as Iterable<Row>)];
  const rowKeys = stmt.columnNames;
  db.close();
  return { rows, rowKeys };
}

/** Encoder columns as the catalog makes them: the kind follows the declared type. */
export function columnsOf(path: string, table: string): EncoderColumn[] {
  const db = new Database(path, { readonly: true });
  const info = db.query(`PRAGMA table_info("${table}")`).all() as { name: string; type: string; notnull: number; pk: number }[];
  db.close();
  return info.map((c) => ({ name: c.name, kind: arrowKindFor(c.type), nullable: c.notnull === 0 && c.pk === 0 }));
}

export function edgeFixture(): Fixture {
  const path = sqliteFile([EDGE_TABLE, ...EDGE_ROWS.map((values) => `INSERT INTO edge VALUES (${values})`)]);
  return { path, columns: columnsOf(path, "edge"), ...readRows(path, "SELECT * FROM edge ORDER BY id") };
}

/** One canonical value per cell, computed from the SQLite value here, not by the encoders. */
export type Canonical = bigint | number | string | boolean | Uint8Array | null;

export function expectedCell(kind: ArrowKind, value: unknown): Canonical {
  if (value === null) return null;
  switch (kind) {
    case "int64":
      return BigInt(value as bigint);
    case "float64":
      return Number(value);
    case "utf8":
      // SQLite's CAST(x AS TEXT) for numbers: integers as digits, reals as SQLite prints them.
      if (typeof value === "bigint") return value.toString();
      if (typeof value === "number") return textOfReal(value);
      return value as string;
    case "binary":
      return value as Uint8Array;
    case "bool":
      return value === 1n;
    case "date32":
      return Date.parse(`${value as string}T00:00:00Z`) / 86_400_000;
    case "timestamp": {
      if (typeof value === "bigint") return value * 1000n;
      if (typeof value === "number") return BigInt(Math.round(value * 1000));
      const text = (value as string).replace(" ", "T");
      return BigInt(Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(text) ? text : `${text}Z`));
    }
    default:
      throw new Error(`SQLite makes no ${kind} column`);
  }
}

function textOfReal(x: number): string {
  const db = new Database(":memory:");
  const text = db.query("SELECT CAST(CAST(?1 AS REAL) AS TEXT) AS t").get(x) as { t: string };
  db.close();
  return text.t;
}

export function expectedRows(columns: EncoderColumn[], rows: Row[], rowKeys: string[]): Canonical[][] {
  return rows.map((row) => columns.map((column, c) => expectedCell(column.kind, (row as Record<string, unknown>)[rowKeys[c]!])));
}

/** RFC 4180, written for the tests: fields (null for an unquoted empty field) of each record. */
export function parseCsv(text: string): (string | null)[][] {
  const records: (string | null)[][] = [];
  let i = 0;
  while (i < text.length) {
    const record: (string | null)[] = [];
    for (;;) {
      let field: string | null;
      if (text[i] === '"') {
        let value = "";
        i++;
        for (;;) {
          const close = text.indexOf('"', i);
          if (close < 0) throw new Error("unterminated quoted field");
          value += text.slice(i, close);
          i = close + 1;
          if (text[i] === '"') {
            value += '"';
            i++;
          } else break;
        }
        field = value;
      } else {
        let end = i;
        while (end < text.length && text[end] !== "," && text[end] !== "\r" && text[end] !== "\n") end++;
        const raw = text.slice(i, end);
        if (raw.includes('"')) throw new Error(`bare quote in an unquoted field: ${raw}`);
        field = raw === "" ? null : raw;
        i = end;
      }
      record.push(field);
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text.startsWith("\r\n", i)) i += 2;
      else if (i < text.length) throw new Error(`record ended by ${JSON.stringify(text[i])}, not CRLF`);
      break;
    }
    records.push(record);
  }
  return records;
}

/** JSON.parse keeping every number's source text, so integers beyond 2^53 stay exact. */
export function parseJsonExact(text: string): unknown {
  return JSON.parse(text, (_key, value, context?: { source?: string }) =>
    typeof value === "number" ? { number: value, source: context?.source ?? String(value) } : value,
  );
}

export interface ExactNumber {
  number: number;
  source: string;
}

/** A text-format cell (CSV field, JSON value) in canonical form for its kind. */
export function canonicalFromText(kind: ArrowKind, cell: unknown): Canonical {
  if (cell === null) return null;
  const text = typeof cell === "object" && cell !== null && "source" in cell ? (cell as ExactNumber).source : cell;
  switch (kind) {
    case "int64":
      if (!/^-?\d+$/.test(String(text))) throw new Error(`not integer digits: ${String(text)}`);
      return BigInt(text as string);
    case "float64":
      return typeof cell === "object" ? (cell as ExactNumber).number : Number(text);
    case "utf8":
      return text as string;
    case "binary":
      return new Uint8Array(Buffer.from(text as string, "base64"));
    case "bool":
      if (text !== true && text !== false && text !== "true" && text !== "false") throw new Error(`not a boolean: ${String(text)}`);
      return text === true || text === "true";
    case "date32":
      if (!/^\d{4}-\d\d-\d\d$/.test(text as string)) throw new Error(`not YYYY-MM-DD: ${String(text)}`);
      return Date.parse(`${text as string}T00:00:00Z`) / 86_400_000;
    case "timestamp":
      if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(text as string)) throw new Error(`not ISO-8601 UTC: ${String(text)}`);
      return BigInt(Date.parse(text as string));
    default:
      throw new Error(`SQLite makes no ${kind} column (tests/formats/kinds.test.ts reads those)`);
  }
}

/** A Parquet file read by parquet-wasm (arrow-rs), handed over as an Arrow table. */
export function readParquetIndependently(bytes: Uint8Array): Table {
  return tableFromIPC(readParquet(bytes).intoIPCStream());
}

/** A cell of a table read back from Parquet, in canonical form. */
export function canonicalFromArrow(kind: ArrowKind, value: unknown): Canonical {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case "int64":
      return value as bigint;
    case "timestamp":
      return BigInt(value as number | bigint);
    case "date32":
      // apache-arrow gives a DateDay as milliseconds since the epoch.
      return (value as number) / 86_400_000;
    default:
      return value as Canonical;
  }
}

/**
 * int64 values at and beyond the edge of JavaScript's safe integers (DESIGN §16): each with what a
 * client parsing the JSON with a plain `JSON.parse` must see, a number while |v| <= 2^53 - 1 and
 * the exact digits as a string beyond.
 */
export const EXACT_INTS: [id: number, stored: bigint | null, seen: number | string | null][] = [
  [1, 9007199254740993n, "9007199254740993"], // 2^53 + 1: JSON.parse of the number gives 2^53
  [2, -9223372036854775808n, "-9223372036854775808"], // JSON.parse of the number gives -9223372036854776000
  [3, 9223372036854775807n, "9223372036854775807"],
  [4, 9007199254740992n, "9007199254740992"], // 2^53 itself: 2^53 + 1 would read back as it
  [5, -9007199254740992n, "-9007199254740992"],
  [6, 9007199254740991n, 9007199254740991], // 2^53 - 1, the largest safe integer
  [7, -9007199254740991n, -9007199254740991],
  [8, 0n, 0],
  [9, 42n, 42],
  [10, -7n, -7],
  [11, null, null],
];

/** `CREATE TABLE ints (id INTEGER PRIMARY KEY, v INTEGER)` holding EXACT_INTS, in a new file at `path`. */
export function createExactIntsDatabase(path: string): void {
  const db = new Database(path, { create: true, strict: true, safeIntegers: true });
  db.run("CREATE TABLE ints (id INTEGER PRIMARY KEY, v INTEGER)");
  const insert = db.prepare("INSERT INTO ints VALUES (?1, ?2)");
  for (const [id, stored] of EXACT_INTS) insert.run(id, stored);
  db.close();
}
