/**
 * Sources of tables (DESIGN.md §14, config/sources.ts): `database: {sqlite}` is the source `main`;
 * `databases:` names several, each one SQLite file or one PostgreSQL database; a table says which
 * one serves it, and its name there.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/errors.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { minimal } from "./examples.ts";
import { expectProblem, problemsOf } from "./support.ts";

const BASE = "/srv/arrow402";
const resolve = (raw: Record<string, unknown>) => resolveConfig(raw, { baseDir: BASE, env: {} });
const withSources = (databases: unknown, tables: unknown[] = [{ name: "items" }]) => ({ databases, tables });
const PG = "postgres://reader:secret@db.internal:5432/market";

describe("resolved", () => {
  test("database: {sqlite} is the source main, and every table is served from it under its own name", () => {
    const config = resolve(minimal());
    expect(config.databases).toEqual({ main: { engine: "sqlite", path: `${BASE}/db.sqlite` } });
    expect(config.tables.map((t) => [t.database, t.source])).toEqual([["main", "items"]]);
  });

  test("named sources: SQLite and PostgreSQL, with defaults; tables name theirs, and their name there", () => {
    const config = resolve(
      withSources({ main: { sqlite: "./a.sqlite" }, warehouse: { postgres: PG }, tuned: { postgres: PG, schema: "analytics", max_connections: 3 } }, [
        { name: "items", database: "main" },
        { name: "swaps", database: "warehouse", source: "analytics.swaps_v2" },
        { name: "pairs", database: "tuned" },
      ]),
    );
    expect(config.databases).toEqual({
      main: { engine: "sqlite", path: `${BASE}/a.sqlite` },
      warehouse: { engine: "postgres", url: PG, schema: "public", maxConnections: 8 },
      tuned: { engine: "postgres", url: PG, schema: "analytics", maxConnections: 3 },
    });
    expect(config.tables.map((t) => [t.name, t.database, t.source])).toEqual([
      ["items", "main", "items"],
      ["swaps", "warehouse", "analytics.swaps_v2"],
      ["pairs", "tuned", "pairs"],
    ]);
  });

  test("one named source needs no database: on its tables", () => {
    expect(resolve(withSources({ lake: { postgres: PG } })).tables[0]).toMatchObject({ database: "lake", source: "items" });
  });
});

describe("problems, each with its path and what to write", () => {
  test.each([
    ["both database: and databases:", { ...minimal(), databases: { main: { sqlite: "x" } } }, "databases", "keep one"],
    ["neither", { tables: [{ name: "items" }] }, "database", "is required"],
    ["no source named", withSources({}), "databases", "names no source"],
    ["a source that is not a mapping", withSources({ main: "x.sqlite" }), "databases.main", "write sqlite: <path>, postgres: <url> or duckdb: <path>"],
    ["a source with no engine", withSources({ main: { schema: "public" } }), "databases.main", "names no engine"],
    ["a source with two engines", withSources({ main: { sqlite: "x", postgres: PG } }), "databases.main", "keep one"],
    ["a setting of another engine", withSources({ main: { sqlite: "x", schema: "public" } }), "databases.main.schema", "is not a setting of a sqlite source"],
    ["a PostgreSQL URL that is not one", withSources({ w: { postgres: "mysql://db/x" } }), "databases.w.postgres", "is not a postgres:// or postgresql:// URL"],
    ["a PostgreSQL URL without a database", withSources({ w: { postgres: "postgres://db.internal:5432" } }), "databases.w.postgres", "names no database"],
    ["max_connections below 1", withSources({ w: { postgres: PG, max_connections: 0 } }), "databases.w.max_connections", "at least 1"],
    ["a source name with a space", withSources({ "my db": { sqlite: "x" } }), `databases["my db"]`, "not a usable source name"],
    ["several sources, a table naming none", withSources({ a: { sqlite: "a" }, b: { sqlite: "b" } }), "tables[0].database", "is required with several sources: write one of a, b"],
    ["a table naming an unknown source", withSources({ a: { sqlite: "a" } }, [{ name: "items", database: "b" }]), "tables[0].database", "names no source; write one of a"],
    ["source: on a SQLite table", withSources({ a: { sqlite: "a" } }, [{ name: "items", source: "other" }]), "tables[0].source", "a SQLite table is served under its own name"],
  ] as const)("%s", (_name, raw, path, fragment) => {
    expectProblem(problemsOf(raw), path, fragment);
  });

  test("the ledger cannot be one of the SQLite sources", () => {
    expectProblem(problemsOf({ ...withSources({ a: { sqlite: "./data.sqlite" } }), ledger: { path: "./data.sqlite" } }), "ledger.path", "is the published database");
  });

  test("a PostgreSQL password is never in a problem", () => {
    const problems = problemsOf(withSources({ w: { postgres: "postgres://reader:hunter2@db.internal:5432", max_connections: 0 } }));
    expect(problems.join("\n")).not.toContain("hunter2");
  });
});

describe("DuckDB sources and tables served from files", () => {
  const dir = mkdtempSync(join(tmpdir(), "arrow402-files-"));
  mkdirSync(join(dir, "lake"));
  for (const name of ["b.parquet", "a.parquet", "trades.csv", "events.ndjson", "notes.txt"]) writeFileSync(join(dir, "lake", name), "");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const inDir = (raw: Record<string, unknown>) => resolveConfig(raw, { baseDir: dir, env: {} });
  const problemsIn = (raw: Record<string, unknown>) => {
    try {
      inDir(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems;
    }
    throw new Error("expected a ConfigError, but the config was accepted");
  };

  test("duckdb: a file (resolved) or :memory:; files: globs expanded once, sorted, the format by extension", () => {
    const config = inDir(
      withSources({ lake: { duckdb: ":memory:" }, wh: { duckdb: "./wh.duckdb", memory_limit_mb: 256, threads: 1 } }, [
        { name: "swaps", database: "lake", files: "./lake/*.parquet" },
        { name: "trades", database: "lake", files: "lake/trades.csv" },
        { name: "events", database: "lake", files: "./lake/events.ndjson" },
        { name: "pairs", database: "wh", source: "main.pairs" },
      ]),
    );
    expect(config.databases).toEqual({
      lake: { engine: "duckdb", path: ":memory:", memoryLimitMb: 1024, threads: null },
      wh: { engine: "duckdb", path: join(dir, "wh.duckdb"), memoryLimitMb: 256, threads: 1 },
    });
    expect(config.tables.map((t) => [t.name, t.files?.format, t.files?.paths])).toEqual([
      ["swaps", "parquet", [join(dir, "lake", "a.parquet"), join(dir, "lake", "b.parquet")]],
      ["trades", "csv", [join(dir, "lake", "trades.csv")]],
      ["events", "ndjson", [join(dir, "lake", "events.ndjson")]],
      ["pairs", undefined, undefined],
    ]);
    expect(config.tables[3]!.source).toBe("main.pairs");
  });

  test.each([
    ["files: on a SQLite table", withSources({ a: { sqlite: "a" } }, [{ name: "items", files: "./lake/a.parquet" }]), "tables[0].files", "is for tables of DuckDB sources; 'a' is a sqlite source"],
    ["files: on a PostgreSQL table", withSources({ w: { postgres: PG } }, [{ name: "items", files: "./lake/a.parquet" }]), "tables[0].files", "'w' is a postgres source"],
    ["a compressed extension", withSources({ l: { duckdb: ":memory:" } }, [{ name: "items", files: "./lake/*.csv.gz" }]), "tables[0].files", "names no format"],
    ["a glob matching nothing", withSources({ l: { duckdb: ":memory:" } }, [{ name: "items", files: "./nowhere/*.parquet" }]), "tables[0].files", "matches no file"],
    ["an unknown extension", withSources({ l: { duckdb: ":memory:" } }, [{ name: "items", files: "./lake/notes.txt" }]), "tables[0].files", "'.txt', which names no format"],
    ["files: and source: both", withSources({ l: { duckdb: ":memory:" } }, [{ name: "items", source: "x", files: "./lake/a.parquet" }]), "tables[0].source", "keep one"],
    ["a table of :memory: without files:", withSources({ l: { duckdb: ":memory:" } }, [{ name: "items" }]), "tables[0].files", "is required"],
    ["duckdb: empty", withSources({ l: { duckdb: "" } }), "databases.l.duckdb", "the path of a DuckDB file"],
    ["a setting of another engine", withSources({ l: { duckdb: ":memory:", schema: "x" } }, [{ name: "items", files: "./lake/a.parquet" }]), "databases.l.schema", "is not a setting of a duckdb source"],
    ["memory_limit_mb below 64", withSources({ l: { duckdb: ":memory:", memory_limit_mb: 32 } }, [{ name: "items", files: "./lake/a.parquet" }]), "databases.l.memory_limit_mb", "got the number 32; write a whole number of at least 64 (megabytes"],
    ["memory_limit_mb as text", withSources({ l: { duckdb: ":memory:", memory_limit_mb: "1GB" } }, [{ name: "items", files: "./lake/a.parquet" }]), "databases.l.memory_limit_mb", "write a whole number of at least 64"],
    ["threads: 0", withSources({ l: { duckdb: ":memory:", threads: 0 } }, [{ name: "items", files: "./lake/a.parquet" }]), "databases.l.threads", "got the number 0; write a whole number of at least 1 (threads"],
    ["threads: 1.5", withSources({ l: { duckdb: ":memory:", threads: 1.5 } }, [{ name: "items", files: "./lake/a.parquet" }]), "databases.l.threads", "write a whole number of at least 1"],
  ] as const)("%s", (_name, raw, path, fragment) => {
    expectProblem(problemsIn(raw), path, fragment);
  });
});
