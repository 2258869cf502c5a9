/**
 * The differential test of DESIGN.md §14 "One dialect" for DuckDB: the PostgreSQL differential
 * test's table (tests/engines/postgres/differential-data.ts) in SQLite and in a DuckDB file, and the
 * same corpus of accepted queries (tests/sql's accepted corpus, the written cases aimed at each
 * difference between the engines, generated queries) run through both: SQLite on the validated
 * text, DuckDB on the SELECT the DuckDB engine compiles. Values are compared after normalising only
 * their representation. Every query must return the same rows and count, or be refused by the
 * compiler with a message naming the construct and DuckDB; ≥ 85% of the corpus must be identical.
 * The DuckDB session is one where nothing the compiler leaves to it could help: TimeZone
 * Asia/Kolkata, and one text column declared COLLATE NOCASE (so a missing binary ORDER BY shows).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { compileFor, isRefusal } from "../../../src/engines/postgres/compile.ts";
import { DUCKDB_DIALECT } from "../../../src/engines/duckdb/dialect.ts";
import { duckColumn, mapDuckType, selectExpression } from "../../../src/engines/duckdb/types.ts";
import type { Catalog } from "../../../src/engines/sqlite/catalog.ts";
import type { ValidatedQuery } from "../../../src/sql/dialect.ts";
import {
  accepted,
  corpus,
  difference,
  keyedQuery,
  number,
  openSqliteSide,
  postgresTypes,
  ROW_COUNT,
  sqliteCount,
  sqliteRowsOf,
  validate,
  type Outcome,
} from "../differential-harness.ts";
import { COLUMNS, ROWS } from "../postgres/differential-data.ts";
import { mixedQueries } from "../postgres/differential-corpus.ts";

setDefaultTimeout(300_000);

/** The PostgreSQL fixture's types as DuckDB's (its NUMERIC values have at most 4 decimals). */
const DUCK_TYPES: Record<string, string> = {
  bigint: "BIGINT",
  text: "VARCHAR",
  "double precision": "DOUBLE",
  boolean: "BOOLEAN",
  date: "DATE",
  "timestamp with time zone": "TIMESTAMP WITH TIME ZONE",
  bytea: "BLOB",
  numeric: "DECIMAL(12,4)",
  integer: "INTEGER",
  real: "FLOAT",
  "character varying(12)": "VARCHAR",
  uuid: "UUID",
  "timestamp without time zone": "TIMESTAMP",
};
const duckType = (i: number) => DUCK_TYPES[COLUMNS[i]!.postgres]!;
const SOURCE_TYPES = COLUMNS.map((_, i) => duckType(i));
const MAPPED = SOURCE_TYPES.map(mapDuckType);
const TARGET = { dialect: DUCKDB_DIALECT, column: duckColumn, select: (i: number) => selectExpression(COLUMNS[i]!.name, MAPPED[i]!) };
const FROM = `"main"."swaps"`;

let sqlite: Database;
let catalog: Catalog;
let instance: DuckDBInstance;
let duck: DuckDBConnection;

beforeAll(async () => {
  ({ sqlite, catalog } = openSqliteSide("arrow402-duck-differential-"));
  instance = await DuckDBInstance.create(":memory:");
  duck = await instance.connect();
  // "order" would sort case-insensitively under its own collation: the compiled ORDER BY must not let it.
  const columns = COLUMNS.map((c, i) => `"${c.name}" ${duckType(i)}${c.name === "order" ? " COLLATE NOCASE" : ""}${c.name === "pair" ? " NOT NULL" : ""}`);
  await duck.run(`CREATE TABLE swaps (${columns.join(", ")})`);
  const literal = (cell: unknown, i: number): string => {
    if (cell === null) return "NULL";
    if (typeof cell === "object") return `from_hex('${(cell as { hex: string }).hex}')`;
    if (typeof cell === "boolean") return cell ? "true" : "false";
    const type = duckType(i);
    if (type === "TIMESTAMP WITH TIME ZONE") return `'${cell}+00'::TIMESTAMPTZ`;
    return `'${String(cell).replaceAll("'", "''")}'::${type}`;
  };
  await duck.run(`INSERT INTO swaps VALUES ${ROWS.map((row) => `(${row.map(literal).join(", ")})`).join(", ")}`);
  await duck.run("SET TimeZone = 'Asia/Kolkata'");
}, 120_000);

afterAll(() => {
  sqlite?.close();
  duck?.closeSync();
  instance?.closeSync();
});

/** DuckDB's values (DuckDBValue objects) as the text of their Arrow value, by the fixture's PostgreSQL type. */
function fromDuck(type: string, v: unknown): string | null {
  if (v === null) return null;
  switch (type) {
    case "double precision":
    case "numeric":
      return number(Number(String(v)));
    case "real":
      return number(Math.fround(Number(v)));
    case "boolean":
      return v ? "t" : "f";
    case "bytea":
      return Buffer.from((v as { bytes: Uint8Array }).bytes).toString("hex");
    case "timestamp with time zone":
    case "timestamp without time zone":
      return String((v as { micros: bigint }).micros);
    default:
      return String(v);
  }
}

function compile(validated: ValidatedQuery) {
  return compileFor(TARGET, validated, () => FROM, SOURCE_TYPES);
}

async function duckRowsOf(sql: string, types: string[]): Promise<(string | null)[][]> {
  const reader = await duck.runAndReadAll(sql);
  return reader.getRows().map((row) => row.map((v, i) => fromDuck(types[i]!, v)));
}

async function differential(queries: string[], title: string): Promise<Outcome> {
  const refusals = new Map<string, string[]>();
  const differing: string[] = [];
  const failing: Outcome["failing"] = [];
  let identical = 0;
  let selective = 0;
  for (const sql of queries) {
    const validated = validate(sql, catalog);
    const compiled = compile(validated);
    if (isRefusal(compiled)) {
      expect(compiled.refusal).toMatch(/^.+ is not available on tables served from DuckDB(: .+)?$/);
      const kind = compiled.refusal.replace(/^'.*?', /, "").replace(/ is not available.*$/, "");
      refusals.set(kind, [...(refusals.get(kind) ?? []), sql]);
      continue;
    }
    const types = postgresTypes(validated.statement.columns);
    let mine: (string | null)[][];
    let count: string;
    try {
      mine = await duckRowsOf(compiled.select, types);
      count = String((await duck.runAndReadAll(compiled.count)).getRowsJS()[0]![0]);
    } catch (error) {
      failing.push({ sql, error: (error as Error).message.split("\n")[0]!, flagged: compiled.failsOnData !== null });
      continue;
    }
    let theirs: (string | null)[][];
    try {
      theirs = sqliteRowsOf(sqlite, validated.sql, types);
    } catch (error) {
      differing.push(`${sql}: SQLite fails (${(error as Error).message}), DuckDB answers`);
      continue;
    }
    const before = differing.length;
    const expectedCount = sqliteCount(sqlite, validated);
    if (count !== expectedCount) differing.push(`${sql}: count ${count} against SQLite's ${expectedCount}`);
    const keyed = keyedQuery(validated);
    let keyedRows = null;
    let keyedSelect = "";
    if (keyed !== null) {
      const compiledKeyed = compile(keyed.validated);
      if (isRefusal(compiledKeyed)) throw new Error(compiledKeyed.refusal);
      keyedSelect = compiledKeyed.select;
      const keyTypes = postgresTypes(keyed.validated.statement.columns);
      keyedRows = { mine: await duckRowsOf(keyedSelect, keyTypes), theirs: sqliteRowsOf(sqlite, keyed.sqlite, keyTypes) };
    }
    const problem = difference(validated, { mine, theirs }, keyedRows);
    if (problem !== null) {
      const [a, b] = keyedRows === null ? [mine, theirs] : [keyedRows.mine, keyedRows.theirs];
      differing.push(`${sql}: ${problem}\n  DuckDB: ${JSON.stringify(a)}\n  SQLite: ${JSON.stringify(b)}\n  compiled: ${keyedRows === null ? compiled.select : keyedSelect}`);
    }
    if (differing.length === before) {
      identical++;
      if (theirs.length > 0 && theirs.length < ROW_COUNT) selective++;
    }
  }
  const refused = [...refusals.values()].reduce((n, list) => n + list.length, 0);
  console.log(
    [
      `${title}: ${queries.length} accepted queries; identical: ${identical} (${((100 * identical) / queries.length).toFixed(1)}%; ${selective} of them neither empty nor every row); refused: ${refused}; DuckDB errors: ${failing.length}; differing: ${differing.length}`,
      ...[...refusals].sort((a, b) => b[1].length - a[1].length).slice(0, 12).map(([kind, list]) => `  ${String(list.length).padStart(4)}  ${kind}\n        e.g. ${list[0]}`),
      ...failing.map((f) => `  error${f.flagged ? " (flagged by failsOnData)" : ""}: ${f.sql}: ${f.error}`),
      ...differing.slice(0, 20),
    ].join("\n"),
  );
  return { queries: queries.length, identical, selective, differing, failing };
}

describe("the same rows from SQLite and from DuckDB", () => {
  test("the corpus: every query identical, or refused naming the construct and DuckDB", async () => {
    const outcome = await differential(corpus(catalog), "corpus");
    expect(outcome.differing).toEqual([]);
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    expect(outcome.identical / outcome.queries).toBeGreaterThanOrEqual(0.85);
    expect(outcome.selective / outcome.identical).toBeGreaterThan(0.5);
    expect(outcome.queries).toBeGreaterThan(1000);
  });

  test("expressions of any shape over columns and literals of every kind: none differs", async () => {
    const outcome = await differential(accepted(catalog, mixedQueries(Number(process.env.DIFF_MIXED ?? 600), 7)), "mixed expressions");
    expect(outcome.differing).toEqual([]);
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    expect(outcome.identical).toBeGreaterThan(150);
  });
});
