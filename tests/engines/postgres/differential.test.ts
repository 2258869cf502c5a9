/**
 * The differential test of DESIGN.md §14 "One dialect": the same table in SQLite and in a real
 * PostgreSQL (differential-data.ts), and a corpus of accepted queries (the accepted corpus of
 * tests/sql, written cases aimed at each difference between the engines, generated queries) run
 * through both: SQLite on the validated text, PostgreSQL on compileForPostgres()'s SELECT, read with
 * COPY … TO STDOUT as the engine reads. Values are compared after normalising only their
 * representation (each as the text of its Arrow value). Every query must return the same rows and
 * count, or be refused by the compiler with a message naming the construct and PostgreSQL. The
 * PostgreSQL database is one where nothing the compiler leaves to the session could help: an ICU
 * collation that folds non-ASCII letters, TimeZone Asia/Kolkata, DateStyle DMY,
 * standard_conforming_strings off.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileForPostgres, isRefusal, type PostgresQuery } from "../../../src/engines/postgres/compile.ts";
import { CONTINUE_FUNCTION } from "../../../src/engines/sqlite/guard.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { countSql, validateQuery, type ValidatedQuery } from "../../../src/sql/dialect.ts";
import { usePostgres } from "../../support/postgres.ts";
import { ACCEPTED, generatedQueries as fixtureQueries } from "../../sql/corpus.ts";
import { copyOut, type CopyRows } from "./copy.ts";
import { COLUMNS, postgresSetup, ROWS, SQLITE_CREATE, sqliteRows } from "./differential-data.ts";
import { generatedQueries, mixedQueries, WRITTEN } from "./differential-corpus.ts";

setDefaultTimeout(300_000);

const postgres = usePostgres();
const TABLE = { schema: "market", name: "swaps" };
const SOURCE_TYPES = COLUMNS.map((c) => c.postgres);
/** Only how values are written out (read back below); the queries' meaning must not depend on it. */
const OUTPUT_SETTINGS = { extra_float_digits: "3", bytea_output: "hex" };
const ROW_COUNT = ROWS.length;

let dir: string;
let sqlite: Database;
let catalog: Catalog;
let url: string;

beforeAll(async () => {
  const admin = new SQL({ url: postgres.server.url, max: 1 });
  try {
    await admin.unsafe("CREATE DATABASE differential TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'");
  } finally {
    await admin.close();
  }
  url = postgres.server.url.replace(/\/postgres$/, "/differential");
  const setup = new SQL({ url, max: 1 });
  try {
    for (const statement of postgresSetup(TABLE.schema)) await setup.unsafe(statement);
    // For every later session: settings a compiled query must not depend on.
    for (const setting of ["TimeZone = 'Asia/Kolkata'", "DateStyle = 'ISO, DMY'", "standard_conforming_strings = off", "extra_float_digits = 0"]) {
      await setup.unsafe(`ALTER DATABASE differential SET ${setting}`);
    }
  } finally {
    await setup.close();
  }

  dir = mkdtempSync(join(tmpdir(), "arrow402-differential-"));
  const path = join(dir, "swaps.sqlite");
  const writer = new Database(path, { create: true });
  writer.run(SQLITE_CREATE);
  const insert = writer.prepare(`INSERT INTO swaps VALUES (${COLUMNS.map(() => "?").join(", ")})`);
  for (const row of sqliteRows()) insert.run(...row);
  writer.close();
  const reader = openReadOnly(path);
  const read = readCatalog(reader, [{ name: "swaps", database: "main", source: "swaps", description: "", columns: {}, priceTags: [] }]);
  reader.close();
  if (read.problems.length > 0) throw new Error(read.problems.join("\n"));
  catalog = read.catalog;
  sqlite = new Database(path, { readonly: true, safeIntegers: true });
  sqlite.function(CONTINUE_FUNCTION, { deterministic: false }, () => 1);
}, 120_000);

afterAll(() => {
  sqlite?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const onSwaps = (sql: string) => /\bFROM\s+"?swaps"?(\s|;|$)/i.test(sql);

/** The distinct queries of `all` that the validator accepts. */
function accepted(all: string[]): string[] {
  return [...new Set(all)].filter((sql) => {
    try {
      validateQuery(sql, catalog, { maxQueryBytes: 16384 });
      return true;
    } catch {
      return false;
    }
  });
}

/** Queries as buyers write them: the accepted corpus of tests/sql, the written cases, generated ones (DIFF_N, DIFF_SEED for more). */
const corpus = () =>
  accepted([
    ...ACCEPTED.map(([sql]) => sql).filter(onSwaps),
    ...WRITTEN,
    ...generatedQueries(Number(process.env.DIFF_N ?? 900), Number(process.env.DIFF_SEED ?? 14)),
    ...fixtureQueries(4000, 402).filter(onSwaps),
  ]);

// ---- Values as the text of their Arrow value, whichever engine wrote them ----

const number = (n: number) => (Object.is(n, -0) ? "0" : String(n));

/** 'YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM]]' as microseconds since 1970 (UTC when no offset). */
function micros(text: string): string {
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

function fromSqlite(type: string, v: unknown): string | null {
  if (v === null) return null;
  switch (type) {
    case "double precision":
      return number(Number(v));
    case "real":
      return number(Math.fround(Number(v)));
    case "numeric":
      return number(Number(v));
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

function fromPostgres(type: string, v: string | null): string | null {
  if (v === null) return null;
  switch (type) {
    case "double precision":
    case "numeric":
      return number(Number(v));
    case "real":
      return number(Math.fround(Number(v)));
    case "bytea":
      return v.slice(2);
    case "timestamp with time zone":
    case "timestamp without time zone":
      return micros(v);
    default:
      return v;
  }
}

// ---- Running both ----

interface Run {
  sql: string;
  validated: ValidatedQuery;
  compiled: PostgresQuery;
  /** The same query with its ORDER BY columns appended to the output, to compare orders with ties. */
  keyed: { sqlite: string; postgres: string } | null;
}

function keyed(validated: ValidatedQuery): Run["keyed"] {
  const { statement } = validated;
  if (statement.orderBy.length === 0) return null;
  const keys = statement.orderBy.map((term, i) => ({ name: `__k${i}`, column: term.column }));
  const sqliteKeys = keys.map((k) => `, "${validated.table.columns[k.column]!.name.replaceAll('"', '""')}" AS "${k.name}"`).join("");
  const compiled = compileForPostgres({ ...validated, statement: { ...statement, columns: [...statement.columns, ...keys] } }, TABLE, SOURCE_TYPES);
  if (isRefusal(compiled)) throw new Error(compiled.refusal);
  return {
    sqlite: validated.sql.slice(0, validated.selectListEnd) + sqliteKeys + validated.sql.slice(validated.selectListEnd),
    postgres: compiled.select,
  };
}

function sqliteRowsOf(sql: string, types: string[]): (string | null)[][] {
  return sqlite.query(sql).values().map((row) => row.map((v, i) => fromSqlite(types[i]!, v)));
}

const postgresRowsOf = (rows: CopyRows, types: string[]) => rows.map((row) => row.map((v, i) => fromPostgres(types[i]!, v)));

const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

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

/** What a refusal is about, for the report. */
const CATEGORIES: [RegExp, string][] = [
  [/text read from the table next to a number/, "text read from the table compared with a number: SQLite's affinity converts it when it reads as one"],
  [/on a REAL value|CAST of a REAL value/, "a REAL written as text (||, LIKE, lower(), CAST AS TEXT…): SQLite's own number formatting"],
  [/on a BLOB|of a blob|in a blob|trimming a blob|arithmetic on a blob/, "a blob read as text or number"],
  [/decimal places/, "round() with decimal places (SQLite's printf)"],
  [/strftime\('%/, "strftime() specifiers other than %Y %m %d %H %M %S %%"],
  [/julianday\(\) of a timestamp/, "julianday() of a timestamp (SQLite's millisecond rounding)"],
  [/with modifiers|without a date|of text other than|not a date or timestamp column/, "date functions with modifiers, 'now', or other arguments than a date/timestamp column or canonical literal"],
  [/coalesce\(\) or ifnull\(\) of INTEGER and REAL|coalesce\(\) of values of different kinds/, "coalesce()/ifnull() mixing kinds, in arithmetic or as text"],
  [/arithmetic on text|arithmetic on a NUMERIC|abs\(\) of text|round\(\) of text/, "arithmetic on text or NUMERIC (SQLite's numeric prefix of text)"],
  [/used as a condition/, "text used as a condition"],
  [/not a literal/, "a LIKE-with-ESCAPE, GLOB or substr() argument read from the table"],
  [/CAST of/, "CAST of text or blobs to numbers (SQLite's prefix parsing)"],
  [/significant digits/, "numbers with more significant digits than both engines keep alike"],
  [/negating -9223372036854775808|integer overflow/, "integer overflow in constants"],
  [/ESCAPE '[%_]'/, "a wildcard as ESCAPE character"],
];

function category(message: string): string {
  return CATEGORIES.find(([pattern]) => pattern.test(message))?.[1] ?? `other: ${message}`;
}

interface Outcome {
  queries: number;
  identical: number;
  /** Identical and neither empty nor every row: the comparison was not vacuous. */
  selective: number;
  differing: string[];
  failing: { sql: string; error: string; flagged: boolean }[];
}

/** Runs `queries` through both engines; each is identical, refused (by name), differing, or a PostgreSQL error. */
async function differential(queries: string[], title: string): Promise<Outcome> {
  const runs: Run[] = [];
  const refusals = new Map<string, string[]>();
  const differing: string[] = [];
  const failing: { sql: string; error: string; flagged: boolean }[] = [];
  for (const sql of queries) {
    const validated = validateQuery(sql, catalog, { maxQueryBytes: 16384 });
    const compiled = compileForPostgres(validated, TABLE, SOURCE_TYPES);
    if (isRefusal(compiled)) {
      expect(compiled.refusal).toMatch(/^.+ is not available on tables served from PostgreSQL(: .+)?$/);
      const list = refusals.get(category(compiled.refusal)) ?? [];
      list.push(`${sql}  →  ${compiled.refusal}`);
      refusals.set(category(compiled.refusal), list);
      continue;
    }
    runs.push({ sql, validated, compiled, keyed: keyed(validated) });
  }

  // PostgreSQL errors first (each on its own: a COPY batch stops at the first), with the counts.
  const client = new SQL({ url, max: 1 });
  const counts = new Map<Run, string>();
  const ran: Run[] = [];
  try {
    for (const run of runs) {
      try {
        await client.unsafe(run.compiled.select);
        const [row] = await client.unsafe(run.compiled.count);
        counts.set(run, String(Object.values(row as object)[0]));
        ran.push(run);
      } catch (error) {
        failing.push({ sql: run.sql, error: (error as Error).message, flagged: run.compiled.failsOnData !== null });
      }
    }
  } finally {
    await client.close();
  }

  // So that equality is not vacuous: queries whose result is neither empty nor the whole table.
  let selective = 0;
  const selects = ran.flatMap((run) => (run.keyed === null ? [run.compiled.select] : [run.compiled.select, run.keyed.postgres]));
  const results = copyOut(url, selects, OUTPUT_SETTINGS);
  let next = 0;
  for (const run of ran) {
    const types = run.validated.statement.columns.map((c) => COLUMNS[c.column]!.postgres);
    const mine = postgresRowsOf(results[next++]!, types);
    let theirs: (string | null)[][];
    try {
      theirs = sqliteRowsOf(run.validated.sql, types);
    } catch (error) {
      differing.push(`${run.sql}: SQLite fails (${(error as Error).message}), PostgreSQL answers`);
      if (run.keyed !== null) next++;
      continue;
    }
    const { statement } = run.validated;
    const sqliteCount = String((sqlite.query(countSql(run.validated)).values()[0] as unknown[])[0]);
    if (theirs.length > 0 && theirs.length < ROW_COUNT) selective++;
    if (counts.get(run) !== sqliteCount) differing.push(`${run.sql}: count ${counts.get(run)} against SQLite's ${sqliteCount}`);
    if (run.keyed === null) {
      // Without ORDER BY both read in insertion order (SQLite's rowid, a fresh heap): exact when LIMIT picks rows.
      const same = statement.limit !== null ? JSON.stringify(mine) === JSON.stringify(theirs) : JSON.stringify(sorted(mine)) === JSON.stringify(sorted(theirs));
      if (!same) differing.push(`${run.sql}\n  PostgreSQL: ${JSON.stringify(mine)}\n  SQLite:     ${JSON.stringify(theirs)}\n  compiled:   ${run.compiled.select}`);
      continue;
    }
    const keyTypes = [...types, ...statement.orderBy.map((t) => COLUMNS[t.column]!.postgres)];
    const mineKeyed = postgresRowsOf(results[next++]!, keyTypes);
    const theirsKeyed = sqliteRowsOf(run.keyed.sqlite, keyTypes);
    const cut = { first: (statement.offset ?? 0) > 0, last: statement.limit !== null };
    const problem = sameOrder(mineKeyed, theirsKeyed, statement.orderBy.length, cut);
    const plainSame = statement.limit !== null ? mine.length === theirs.length : JSON.stringify(sorted(mine)) === JSON.stringify(sorted(theirs));
    if (problem !== null || !plainSame) {
      differing.push(`${run.sql}: ${problem ?? "other rows"}\n  PostgreSQL: ${JSON.stringify(mineKeyed)}\n  SQLite:     ${JSON.stringify(theirsKeyed)}\n  compiled:   ${run.keyed.postgres}`);
    }
  }

  const refused = [...refusals.values()].reduce((n, list) => n + list.length, 0);
  const identical = ran.length - differing.length;
  const report = [
    `${title}: ${queries.length} accepted queries; identical: ${identical} (${((100 * identical) / queries.length).toFixed(1)}%; ${selective} of them neither empty nor every row); refused: ${refused}; PostgreSQL errors: ${failing.length}; differing: ${differing.length}`,
    ...[...refusals].sort((a, b) => b[1].length - a[1].length).map(([name, list]) => `  ${String(list.length).padStart(4)}  ${name}\n        e.g. ${list[0]}`),
    ...failing.map((f) => `  error${f.flagged ? " (flagged by failsOnData)" : ""}: ${f.sql}: ${f.error}`),
  ].join("\n");
  console.log(report);
  // Every refusal, for a closer look: DIFFERENTIAL_REFUSALS=<file>.
  if (process.env.DIFFERENTIAL_REFUSALS) await Bun.write(process.env.DIFFERENTIAL_REFUSALS, [...refusals].map(([name, list]) => `## ${name}\n${list.join("\n")}\n`).join("\n"));
  return { queries: queries.length, identical, selective, differing, failing };
}

describe("the same rows from SQLite and from PostgreSQL", () => {
  test("the corpus: every query identical, or refused naming the construct and PostgreSQL", async () => {
    const outcome = await differential(corpus(), "corpus");
    expect(outcome.differing).toEqual([]);
    // A PostgreSQL error is never a different answer, but only where failsOnData says it may happen.
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    expect(outcome.identical / outcome.queries).toBeGreaterThanOrEqual(0.85);
    expect(outcome.selective / outcome.identical).toBeGreaterThan(0.5);
    expect(outcome.queries).toBeGreaterThan(1000);
  });

  test("expressions of any shape over columns and literals of every kind (DIFF_MIXED for more): none differs", async () => {
    const outcome = await differential(accepted(mixedQueries(Number(process.env.DIFF_MIXED ?? 600), 7)), "mixed expressions");
    expect(outcome.differing).toEqual([]);
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    // Most are refused (text read as numbers, REALs as text…); enough compile to mean something.
    expect(outcome.identical).toBeGreaterThan(150);
  });
});
