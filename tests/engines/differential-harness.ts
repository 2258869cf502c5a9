/**
 * What every differential test of DESIGN.md §14 "One dialect" shares, whichever engine it compares
 * with SQLite: the SQLite side (differential-data.ts's table in a file, its catalog, a reader), the
 * corpus of accepted queries, values written as the text of their Arrow value, and the comparison of
 * orders with ties. An engine's test adds only how it runs a compiled query and reads its values.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { CONTINUE_FUNCTION } from "../../src/engines/sqlite/guard.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../src/engines/sqlite/catalog.ts";
import { countSql, validateQuery, type ValidatedQuery } from "../../src/sql/dialect.ts";
import { tempDir } from "../support/fixtures.ts";
import { ACCEPTED, generatedQueries as fixtureQueries } from "../sql/corpus.ts";
import { COLUMNS, ROWS, SQLITE_CREATE, sqliteRows } from "./postgres/differential-data.ts";
import { generatedQueries, WRITTEN } from "./postgres/differential-corpus.ts";

export const ROW_COUNT = ROWS.length;

/** The SQLite side: the table in a fresh file, its catalog, and a read-only reader that knows the WHERE guard. */
export function openSqliteSide(prefix: string): { sqlite: Database; catalog: Catalog } {
  const path = join(tempDir(prefix), "swaps.sqlite");
  const writer = new Database(path, { create: true });
  writer.run(SQLITE_CREATE);
  const insert = writer.prepare(`INSERT INTO swaps VALUES (${COLUMNS.map(() => "?").join(", ")})`);
  for (const row of sqliteRows()) insert.run(...row);
  writer.close();
  const reader = openReadOnly(path);
  const read = readCatalog(reader, [{ name: "swaps", database: "main", source: "swaps", description: "", columns: {}, priceTags: [] }]);
  reader.close();
  if (read.problems.length > 0) throw new Error(read.problems.join("\n"));
  const sqlite = new Database(path, { readonly: true, safeIntegers: true });
  sqlite.function(CONTINUE_FUNCTION, { deterministic: false }, () => 1);
  return { sqlite, catalog: read.catalog };
}

export const validate = (sql: string, catalog: Catalog) => validateQuery(sql, catalog, { maxQueryBytes: 16384 });

/** The distinct queries of `all` that the validator accepts. */
export function accepted(catalog: Catalog, all: string[]): string[] {
  return [...new Set(all)].filter((sql) => {
    try {
      validate(sql, catalog);
      return true;
    } catch {
      return false;
    }
  });
}

const onSwaps = (sql: string) => /\bFROM\s+"?swaps"?(\s|;|$)/i.test(sql);

/** Queries as buyers write them: the accepted corpus of tests/sql, the written cases, generated ones (DIFF_N, DIFF_SEED for more). */
export const corpus = (catalog: Catalog) =>
  accepted(catalog, [
    ...ACCEPTED.map(([sql]) => sql).filter(onSwaps),
    ...WRITTEN,
    ...generatedQueries(Number(process.env.DIFF_N ?? 900), Number(process.env.DIFF_SEED ?? 14)),
    ...fixtureQueries(4000, 402).filter(onSwaps),
  ]);

// ---- Values as the text of their Arrow value, whichever engine wrote them ----

export const number = (n: number) => (Object.is(n, -0) ? "0" : String(n));

/** 'YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]]' as microseconds since 1970 (UTC when no offset). */
export function micros(text: string): string {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?$/.exec(text);
  if (m === null) throw new Error(`not a timestamp: ${text}`);
  const at = new Date(0);
  at.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3])); // not Date.UTC: it reads years below 100 as 19xx
  at.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  const seconds = BigInt(at.getTime() / 1000);
  const fraction = BigInt((m[7] ?? "").padEnd(6, "0").slice(0, 6) || "0");
  const offset = m[8] === undefined ? 0n : (m[8] === "-" ? -1n : 1n) * BigInt(Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0));
  return String((seconds - offset) * 1_000_000n + fraction);
}

/** A SQLite value of a column whose PostgreSQL type (differential-data.ts) is `type`. */
function fromSqlite(type: string, v: unknown): string | null {
  if (v === null) return null;
  switch (type) {
    case "double precision":
    case "numeric":
      return number(Number(v));
    case "real":
      return number(Math.fround(Number(v)));
    case "boolean":
      return v === 1n ? "t" : v === 0n ? "f" : `?${String(v)}`;
    case "bytea":
      return Buffer.from(v as Uint8Array).toString("hex");
    case "timestamp with time zone":
    case "timestamp without time zone":
      return micros(String(v));
    default:
      return String(v);
  }
}

/** The fixture's PostgreSQL type of each output column of `columns` (which name fixture columns by index). */
export const postgresTypes = (columns: readonly { column: number }[]) => columns.map((c) => COLUMNS[c.column]!.postgres);

export function sqliteRowsOf(sqlite: Database, sql: string, types: string[]): (string | null)[][] {
  return sqlite.query(sql).values().map((row) => row.map((v, i) => fromSqlite(types[i]!, v)));
}

export const sqliteCount = (sqlite: Database, validated: ValidatedQuery) => String((sqlite.query(countSql(validated)).values()[0] as unknown[])[0]);

// ---- Orders with ties ----

/**
 * The query with its ORDER BY columns appended to the output, to compare orders with ties: SQLite's
 * text, and the validated statement an engine compiles for its own; null without ORDER BY.
 */
export function keyedQuery(validated: ValidatedQuery): { sqlite: string; validated: ValidatedQuery; keyCount: number } | null {
  const { statement } = validated;
  if (statement.orderBy.length === 0) return null;
  const keys = statement.orderBy.map((term, i) => ({ name: `__k${i}`, column: term.column }));
  const sqliteKeys = keys.map((k) => `, "${validated.table.columns[k.column]!.name.replaceAll('"', '""')}" AS "${k.name}"`).join("");
  return {
    sqlite: validated.sql.slice(0, validated.selectListEnd) + sqliteKeys + validated.sql.slice(validated.selectListEnd),
    validated: { ...validated, statement: { ...statement, columns: [...statement.columns, ...keys] } },
    keyCount: keys.length,
  };
}

export const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

/**
 * Rows with their sort keys last: the keys in the same sequence, and within each run of equal
 * keys the same rows (any order: neither engine orders ties); a run cut by LIMIT or OFFSET only
 * has as many rows.
 */
function sameOrder(a: (string | null)[][], b: (string | null)[][], keyCount: number, cut: { first: boolean; last: boolean }): string | null {
  if (a.length !== b.length) return `${a.length} rows against ${b.length}`;
  const key = (row: unknown[]) => JSON.stringify(row.slice(row.length - keyCount));
  const runs = (rows: (string | null)[][]) => {
    const out: { key: string; rows: unknown[][] }[] = [];
    for (const row of rows) {
      if (out.at(-1)?.key !== key(row)) out.push({ key: key(row), rows: [] });
      out.at(-1)!.rows.push(row);
    }
    return out;
  };
  const [x, y] = [runs(a), runs(b)];
  if (JSON.stringify(x.map((r) => [r.key, r.rows.length])) !== JSON.stringify(y.map((r) => [r.key, r.rows.length]))) return "another order";
  for (let i = 0; i < x.length; i++) {
    const edge = (i === 0 && cut.first) || (i === x.length - 1 && cut.last);
    if (!edge && JSON.stringify(sorted(x[i]!.rows)) !== JSON.stringify(sorted(y[i]!.rows))) return `other rows among equal keys ${x[i]!.key}`;
  }
  return null;
}

/**
 * What differs between an engine's answer and SQLite's (null: nothing), from the plain rows and,
 * with ORDER BY, the keyed rows. Without ORDER BY both read in insertion order: exact when LIMIT picks rows.
 */
export function difference(
  validated: ValidatedQuery,
  plain: { mine: (string | null)[][]; theirs: (string | null)[][] },
  keyed: { mine: (string | null)[][]; theirs: (string | null)[][] } | null,
): string | null {
  const { statement } = validated;
  const limited = statement.limit !== null;
  if (keyed === null) {
    const same = limited ? JSON.stringify(plain.mine) === JSON.stringify(plain.theirs) : JSON.stringify(sorted(plain.mine)) === JSON.stringify(sorted(plain.theirs));
    return same ? null : "other rows";
  }
  const problem = sameOrder(keyed.mine, keyed.theirs, statement.orderBy.length, { first: (statement.offset ?? 0) > 0, last: limited });
  const plainSame = limited ? plain.mine.length === plain.theirs.length : JSON.stringify(sorted(plain.mine)) === JSON.stringify(sorted(plain.theirs));
  return problem ?? (plainSame ? null : "other rows");
}

/** One differential run's tally. */
export interface Outcome {
  queries: number;
  identical: number;
  /** Identical and neither empty nor every row: the comparison was not vacuous. */
  selective: number;
  differing: string[];
  failing: { sql: string; error: string; flagged: boolean }[];
}
