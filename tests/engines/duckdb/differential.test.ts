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
import { Database } from "bun:sqlite";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { join } from "node:path";
import { compileFor, isRefusal, type PostgresQuery } from "../../../src/engines/postgres/compile.ts";
import { DUCKDB_DIALECT } from "../../../src/engines/duckdb/dialect.ts";
import { duckColumn, mapDuckType, selectExpression } from "../../../src/engines/duckdb/types.ts";
import { CONTINUE_FUNCTION } from "../../../src/engines/sqlite/guard.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { countSql, validateQuery, type ValidatedQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";
import { ACCEPTED, generatedQueries as fixtureQueries } from "../../sql/corpus.ts";
import { COLUMNS, ROWS, SQLITE_CREATE, sqliteRows } from "../postgres/differential-data.ts";
import { generatedQueries, mixedQueries, WRITTEN } from "../postgres/differential-corpus.ts";

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
  const dir = tempDir("arrow402-duck-differential-");
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

const onSwaps = (sql: string) => /\bFROM\s+"?swaps"?(\s|;|$)/i.test(sql);

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

const corpus = () =>
  accepted([
    ...ACCEPTED.map(([sql]) => sql).filter(onSwaps),
    ...WRITTEN,
    ...generatedQueries(Number(process.env.DIFF_N ?? 900), Number(process.env.DIFF_SEED ?? 14)),
    ...fixtureQueries(4000, 402).filter(onSwaps),
  ]);

// ---- Values as the text of their Arrow value, whichever engine wrote them ----

const number = (n: number) => (Object.is(n, -0) ? "0" : String(n));

function micros(text: string): string {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([+-])(\d\d)(?::(\d\d))?)?$/.exec(text);
  if (m === null) throw new Error(`not a timestamp: ${text}`);
  const at = new Date(0);
  at.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  at.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  const seconds = BigInt(at.getTime() / 1000);
  const fraction = BigInt((m[7] ?? "").padEnd(6, "0").slice(0, 6) || "0");
  const offset = m[8] === undefined ? 0n : (m[8] === "-" ? -1n : 1n) * BigInt(Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60);
  return String((seconds - offset) * 1_000_000n + fraction);
}

function fromSqlite(type: string, v: unknown): string | null {
  if (v === null) return null;
  switch (type) {
    case "DOUBLE":
    case "DECIMAL(12,4)":
      return number(Number(v));
    case "FLOAT":
      return number(Math.fround(Number(v)));
    case "BOOLEAN":
      return v === 1n ? "t" : v === 0n ? "f" : `?${String(v)}`;
    case "BLOB":
      return Buffer.from(v as Uint8Array).toString("hex");
    case "TIMESTAMP WITH TIME ZONE":
    case "TIMESTAMP":
      return micros(String(v));
    default:
      return String(v);
  }
}

/** DuckDB's values (DuckDBValue objects) in the same form. */
function fromDuck(type: string, v: unknown): string | null {
  if (v === null) return null;
  switch (type) {
    case "DOUBLE":
    case "DECIMAL(12,4)":
      return number(Number(String(v)));
    case "FLOAT":
      return number(Math.fround(Number(v)));
    case "BOOLEAN":
      return v ? "t" : "f";
    case "BLOB":
      return Buffer.from((v as { bytes: Uint8Array }).bytes).toString("hex");
    case "TIMESTAMP WITH TIME ZONE":
    case "TIMESTAMP":
      return String((v as { micros: bigint }).micros);
    default:
      return String(v);
  }
}

interface Run {
  sql: string;
  validated: ValidatedQuery;
  compiled: PostgresQuery;
  keyed: { sqlite: string; duck: string } | null;
}

function keyed(validated: ValidatedQuery): Run["keyed"] {
  const { statement } = validated;
  if (statement.orderBy.length === 0) return null;
  const keys = statement.orderBy.map((term, i) => ({ name: `__k${i}`, column: term.column }));
  const sqliteKeys = keys.map((k) => `, "${validated.table.columns[k.column]!.name.replaceAll('"', '""')}" AS "${k.name}"`).join("");
  const compiled = compileFor(TARGET, { ...validated, statement: { ...statement, columns: [...statement.columns, ...keys] } }, () => FROM, SOURCE_TYPES);
  if (isRefusal(compiled)) throw new Error(compiled.refusal);
  return { sqlite: validated.sql.slice(0, validated.selectListEnd) + sqliteKeys + validated.sql.slice(validated.selectListEnd), duck: compiled.select };
}

const sqliteRowsOf = (sql: string, types: string[]) => sqlite.query(sql).values().map((row) => row.map((v, i) => fromSqlite(types[i]!, v)));

async function duckRowsOf(sql: string, types: string[]): Promise<(string | null)[][]> {
  const reader = await duck.runAndReadAll(sql);
  return reader.getRows().map((row) => row.map((v, i) => fromDuck(types[i]!, v)));
}

const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

/** As the PostgreSQL differential test: the same keys in sequence, the same rows among equal keys (a run cut by LIMIT/OFFSET only as many). */
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

interface Outcome {
  queries: number;
  identical: number;
  selective: number;
  differing: string[];
  failing: { sql: string; error: string; flagged: boolean }[];
}

async function differential(queries: string[], title: string): Promise<Outcome> {
  const refusals = new Map<string, string[]>();
  const differing: string[] = [];
  const failing: Outcome["failing"] = [];
  let identical = 0;
  let selective = 0;
  for (const sql of queries) {
    const validated = validateQuery(sql, catalog, { maxQueryBytes: 16384 });
    const compiled = compileFor(TARGET, validated, () => FROM, SOURCE_TYPES);
    if (isRefusal(compiled)) {
      expect(compiled.refusal).toMatch(/^.+ is not available on tables served from DuckDB(: .+)?$/);
      const kind = compiled.refusal.replace(/^'.*?', /, "").replace(/ is not available.*$/, "");
      refusals.set(kind, [...(refusals.get(kind) ?? []), sql]);
      continue;
    }
    const run: Run = { sql, validated, compiled, keyed: keyed(validated) };
    const types = validated.statement.columns.map((c) => duckType(c.column));
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
      theirs = sqliteRowsOf(validated.sql, types);
    } catch (error) {
      differing.push(`${sql}: SQLite fails (${(error as Error).message}), DuckDB answers`);
      continue;
    }
    const sqliteCount = String((sqlite.query(countSql(validated)).values()[0] as unknown[])[0]);
    const before = differing.length;
    if (count !== sqliteCount) differing.push(`${sql}: count ${count} against SQLite's ${sqliteCount}`);
    const { statement } = validated;
    if (run.keyed === null) {
      const same = statement.limit !== null ? JSON.stringify(mine) === JSON.stringify(theirs) : JSON.stringify(sorted(mine)) === JSON.stringify(sorted(theirs));
      if (!same) differing.push(`${sql}\n  DuckDB: ${JSON.stringify(mine)}\n  SQLite: ${JSON.stringify(theirs)}\n  compiled: ${compiled.select}`);
    } else {
      const keyTypes = [...types, ...statement.orderBy.map((t) => duckType(t.column))];
      const mineKeyed = await duckRowsOf(run.keyed.duck, keyTypes);
      const theirsKeyed = sqliteRowsOf(run.keyed.sqlite, keyTypes);
      const problem = sameOrder(mineKeyed, theirsKeyed, statement.orderBy.length, { first: (statement.offset ?? 0) > 0, last: statement.limit !== null });
      const plainSame = statement.limit !== null ? mine.length === theirs.length : JSON.stringify(sorted(mine)) === JSON.stringify(sorted(theirs));
      if (problem !== null || !plainSame) differing.push(`${sql}: ${problem ?? "other rows"}\n  DuckDB: ${JSON.stringify(mineKeyed)}\n  SQLite: ${JSON.stringify(theirsKeyed)}\n  compiled: ${run.keyed.duck}`);
    }
    if (differing.length === before) {
      identical++;
      if (theirs.length > 0 && theirs.length < ROWS.length) selective++;
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
    const outcome = await differential(corpus(), "corpus");
    expect(outcome.differing).toEqual([]);
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    expect(outcome.identical / outcome.queries).toBeGreaterThanOrEqual(0.85);
    expect(outcome.selective / outcome.identical).toBeGreaterThan(0.5);
    expect(outcome.queries).toBeGreaterThan(1000);
  });

  test("expressions of any shape over columns and literals of every kind: none differs", async () => {
    const outcome = await differential(accepted(mixedQueries(Number(process.env.DIFF_MIXED ?? 600), 7)), "mixed expressions");
    expect(outcome.differing).toEqual([]);
    expect(outcome.failing.filter((f) => !f.flagged)).toEqual([]);
    expect(outcome.identical).toBeGreaterThan(150);
  });
});
