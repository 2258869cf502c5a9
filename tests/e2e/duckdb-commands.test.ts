/**
 * `arrow402 validate` on DuckDB sources (DESIGN.md §14), run as the real command line: it opens the
 * DuckDB file and the tables' files and reads every value through the engine: OK (exit 0) when all
 * fit; a value no Arrow type of its column holds (a HUGEINT beyond 38 digits, an infinite date)
 * listed with its config path, column and row (exit 2); a file that is not what its extension says
 * named with its config path (exit 2); a DuckDB file that is not there, one problem at its source's path (exit 2).
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/fixtures.ts";

// Each test starts the command line, which loads DuckDB's native library.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "../..");
let dir: string;

function cli(...args: string[]): { code: number; stdout: string; stderr: string } {
  const run = Bun.spawnSync(["bun", join(ROOT, "src/main.ts"), ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

function writeConfig(file: string, tables: Record<string, unknown>[]): string {
  const config = { server: { bind: "127.0.0.1:0" }, databases: { lake: { duckdb: "./lake.duckdb" }, files: { duckdb: ":memory:" } }, tables };
  writeFileSync(join(dir, file), Bun.YAML.stringify(config, null, 2));
  return file;
}

beforeAll(async () => {
  dir = tempDir();
  const duck = await DuckDBInstance.create(join(dir, "lake.duckdb"));
  const writer = await duck.connect();
  await writer.run(`
    CREATE TABLE fine AS SELECT x AS id, x::HUGEINT * 1000 AS big, DATE '2024-01-01' + x::INTEGER AS day FROM range(1, 101) t(x);
    CREATE TABLE odd AS SELECT * FROM fine;
    UPDATE odd SET big = 170141183460469231731687303715884105727 WHERE id = 7;
    UPDATE odd SET day = 'infinity' WHERE id = 9;
    COPY (SELECT * FROM fine) TO '${join(dir, "fine.parquet")}' (FORMAT parquet);
  `);
  writer.closeSync();
  duck.closeSync();
  writeFileSync(join(dir, "broken.parquet"), "not a parquet file");
});

describe("arrow402 validate", () => {
  test("reads every value of the DuckDB file and of the files: OK when all fit", () => {
    const run = cli("validate", "--config", writeConfig("ok.yaml", [{ name: "fine", database: "lake" }, { name: "lake_files", database: "files", files: "./fine.parquet" }]));
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("ok.yaml: OK — 2 table(s), 200 row(s) scanned, every value fits its column's type\n");
  });

  test("lists each value that does not fit with its config path, column and row; exit 2", () => {
    const run = cli("validate", "--config", writeConfig("odd.yaml", [{ name: "odd", database: "lake" }]));
    expect(run.code).toBe(2);
    const problems = run.stderr.split("\n").filter((line) => line.startsWith("  "));
    expect(problems).toEqual([
      expect.stringMatching(/^ {2}tables\[0\] \(odd\)\.big: row \d+: unscaled value 170141183460469231731687303715884105727 has more than 38 digits/),
      expect.stringMatching(/^ {2}tables\[0\] \(odd\)\.day: row \d+: the date infinity has no Date32 value/),
    ]);
  });

  test("a file that is not what its extension says: its config path and DuckDB's reason; exit 2", () => {
    const run = cli("validate", "--config", writeConfig("broken.yaml", [{ name: "fine", database: "lake" }, { name: "broken", database: "files", files: "./broken.parquet" }]));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("tables[1].files: DuckDB cannot read");
    expect(run.stderr).toContain("broken.parquet as parquet");
  });

  test("a DuckDB file that is not there: one problem at databases.<name>.duckdb; exit 2", () => {
    const config = { databases: { lake: { duckdb: "./nowhere.duckdb" } }, tables: [{ name: "fine" }] };
    writeFileSync(join(dir, "missing.yaml"), Bun.YAML.stringify(config, null, 2));
    const run = cli("validate", "--config", "missing.yaml");
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("  "))).toEqual([
      expect.stringMatching(/^ {2}databases\.lake\.duckdb: the DuckDB source 'lake' cannot be opened \(.*nowhere\.duckdb.*\): check databases\.lake\.duckdb, a DuckDB database file$/),
    ]);
  });
});
