/**
 * Sources of tables (DESIGN.md §14, config/sources.ts): `database: {sqlite}` is the source `main`;
 * `databases:` names several, each one SQLite file or one PostgreSQL database; a table says which
 * one serves it, and its name there.
 */
import { describe, expect, test } from "bun:test";
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
    ["a source that is not a mapping", withSources({ main: "x.sqlite" }), "databases.main", "write sqlite: <path> or postgres: <url>"],
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
