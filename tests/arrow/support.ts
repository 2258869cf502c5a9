/**
 * Real SQLite files for the encoder tests, and the decoded view of a stream through apache-arrow.
 */
import { Database } from "bun:sqlite";
import { tempDir } from "../support/fixtures.ts";
import { join } from "node:path";
import { tableFromIPC, type Table } from "apache-arrow";
import { arrowKindFor } from "../../src/arrow/types.ts";
import type { EncoderColumn } from "../../src/arrow/encode.ts";

export interface TestColumn {
  name: string;
  /** The declared SQLite type, e.g. "INTEGER", "DATETIME", "" (none). */
  declared: string;
  notNull?: boolean;
}

/** A value inserted as SQL text, e.g. `new SqlLiteral("2.0")` for a REAL that bun:sqlite would bind as INTEGER. */
export class SqlLiteral {
  constructor(readonly sql: string) {}
}

/**
 * Creates a table in a fresh database file, inserts the rows, and reads them back the way the
 * query worker does: a read-only connection with safeIntegers, `stmt.values()`.
 */
export function storeAndRead(columns: TestColumn[], rows: unknown[][], options: { safeIntegers?: boolean } = {}): unknown[][] {
  const path = join(tempDir("arrow402-arrow-"), "test.sqlite");
  const db = new Database(path, { create: true, safeIntegers: true });
  db.run("PRAGMA synchronous = OFF"); // test files need no durability
  const definitions = columns.map((c) => `"${c.name}" ${c.declared}${c.notNull ? " NOT NULL" : ""}`);
  db.run(`CREATE TABLE t (${definitions.join(", ")})`);
  db.transaction(() => {
    for (const row of rows) {
      const placeholders = row.map((v) => (v instanceof SqlLiteral ? v.sql : "?"));
      const bound = row.filter((v) => !(v instanceof SqlLiteral));
      db.query(`INSERT INTO t VALUES (${placeholders.join(", ")})`).run(...(bound as never[]));
    }
  })();
  db.close();
  const readOnly = new Database(path, { readonly: true, safeIntegers: options.safeIntegers ?? true });
  const result = readOnly.query("SELECT * FROM t ORDER BY rowid").values();
  readOnly.close();
  return result;
}

/** Encoder columns for test columns: the kind follows the declared type, as in the catalog. */
export function encoderColumns(columns: TestColumn[]): EncoderColumn[] {
  return columns.map((c) => ({ name: c.name, kind: arrowKindFor(c.declared), nullable: !c.notNull }));
}

export function decode(stream: Uint8Array): Table {
  return tableFromIPC(stream);
}

/** Column c of a decoded table as plain values (bigint, number, string, boolean, Uint8Array, null). */
export function decodedColumn(table: Table, c: number): unknown[] {
  const vector = table.getChildAt(c);
  if (!vector) throw new Error(`no column ${c}`);
  return Array.from({ length: table.numRows }, (_, r) => vector.get(r));
}

/** A small seeded generator (mulberry32), so a failing property case can be replayed. */
export { mulberry32 as seededRandom } from "../support/random.ts";
