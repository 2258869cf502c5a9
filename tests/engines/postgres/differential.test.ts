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
import type { Database } from "bun:sqlite";
import { SQL } from "bun";
import { compileForPostgres, isRefusal, type PostgresQuery } from "../../../src/engines/postgres/compile.ts";
import type { Catalog } from "../../../src/engines/sqlite/catalog.ts";
import type { ValidatedQuery } from "../../../src/sql/dialect.ts";
import { usePostgres } from "../../support/postgres.ts";
import {
  accepted,
  corpus,
  difference,
  keyedQuery,
  micros,
  number,
  openSqliteSide,
  postgresTypes,
  ROW_COUNT,
  sqliteCount,
  sqliteRowsOf,
  validate,
  type Outcome,
} from "../differential-harness.ts";
import { copyOut, type CopyRows } from "./copy.ts";
import { COLUMNS, postgresSetup } from "./differential-data.ts";
import { mixedQueries } from "./differential-corpus.ts";

setDefaultTimeout(300_000);

const postgres = usePostgres();
const TABLE = { schema: "market", name: "swaps" };
const SOURCE_TYPES = COLUMNS.map((c) => c.postgres);
/** Only how values are written out (read back below); the queries' meaning must not depend on it. */
const OUTPUT_SETTINGS = { extra_float_digits: "3", bytea_output: "hex" };

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
  ({ sqlite, catalog } = openSqliteSide("arrow402-differential-"));
}, 120_000);

afterAll(() => {
  sqlite?.close();
});

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
  keyed: { sqlite: string; postgres: string; validated: ValidatedQuery } | null;
}

function keyed(validated: ValidatedQuery): Run["keyed"] {
  const query = keyedQuery(validated);
  if (query === null) return null;
  const compiled = compileForPostgres(query.validated, TABLE, SOURCE_TYPES);
  if (isRefusal(compiled)) throw new Error(compiled.refusal);
  return { sqlite: query.sqlite, postgres: compiled.select, validated: query.validated };
}

const postgresRowsOf = (rows: CopyRows, types: string[]) => rows.map((row) => row.map((v, i) => fromPostgres(types[i]!, v)));

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

/** Runs `queries` through both engines; each is identical, refused (by name), differing, or a PostgreSQL error. */
async function differential(queries: string[], title: string): Promise<Outcome> {
  const runs: Run[] = [];
  const refusals = new Map<string, string[]>();
  const differing: string[] = [];
  const failing: Outcome["failing"] = [];
  for (const sql of queries) {
    const validated = validate(sql, catalog);
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
    const types = postgresTypes(run.validated.statement.columns);
    const mine = postgresRowsOf(results[next++]!, types);
    let theirs: (string | null)[][];
    try {
      theirs = sqliteRowsOf(sqlite, run.validated.sql, types);
    } catch (error) {
      differing.push(`${run.sql}: SQLite fails (${(error as Error).message}), PostgreSQL answers`);
      if (run.keyed !== null) next++;
      continue;
    }
    const expectedCount = sqliteCount(sqlite, run.validated);
    if (theirs.length > 0 && theirs.length < ROW_COUNT) selective++;
    if (counts.get(run) !== expectedCount) differing.push(`${run.sql}: count ${counts.get(run)} against SQLite's ${expectedCount}`);
    let keyedRows = null;
    if (run.keyed !== null) {
      const keyTypes = postgresTypes(run.keyed.validated.statement.columns);
      keyedRows = { mine: postgresRowsOf(results[next++]!, keyTypes), theirs: sqliteRowsOf(sqlite, run.keyed.sqlite, keyTypes) };
    }
    const problem = difference(run.validated, { mine, theirs }, keyedRows);
    if (problem !== null) {
      const [a, b] = keyedRows === null ? [mine, theirs] : [keyedRows.mine, keyedRows.theirs];
      differing.push(`${run.sql}: ${problem}\n  PostgreSQL: ${JSON.stringify(a)}\n  SQLite:     ${JSON.stringify(b)}\n  compiled:   ${run.keyed?.postgres ?? run.compiled.select}`);
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
    const outcome = await differential(corpus(catalog), "corpus");
    expect(outcome.differing).toEqual([]);
    // A PostgreSQL error is never a different answer, but only where failsOnData says it may happen.
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    expect(outcome.identical / outcome.queries).toBeGreaterThanOrEqual(0.85);
    expect(outcome.selective / outcome.identical).toBeGreaterThan(0.5);
    expect(outcome.queries).toBeGreaterThan(1000);
  });

  test("expressions of any shape over columns and literals of every kind (DIFF_MIXED for more): none differs", async () => {
    const outcome = await differential(accepted(catalog, mixedQueries(Number(process.env.DIFF_MIXED ?? 600), 7)), "mixed expressions");
    expect(outcome.differing).toEqual([]);
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    // Most are refused (text read as numbers, REALs as text…); enough compile to mean something.
    expect(outcome.identical).toBeGreaterThan(150);
  });
});
