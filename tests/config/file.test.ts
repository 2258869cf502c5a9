import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfigFile } from "../../src/config/load.ts";
import { ConfigError } from "../../src/errors.ts";
import { FULL_EXAMPLE_YAML } from "./examples.ts";

const dir = mkdtempSync(join(tmpdir(), "arrow402-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function problemsLoading(path: string, env: Record<string, string> = {}): string[] {
  try {
    loadConfigFile(path, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfigFile", () => {
  test("loads the full example; relative paths resolve against the file's directory", () => {
    const path = writeConfig("etc/arrow402.yaml", FULL_EXAMPLE_YAML);
    const config = loadConfigFile(path, { FACILITATOR_TOKEN: "abc" });
    expect(config.databases).toEqual({ main: { engine: "sqlite", path: join(dir, "etc/data/market.sqlite") } });
    expect(config.ledger.path).toBe(join(dir, "etc/arrow402-ledger.sqlite"));
    expect(config.dashboards?.root).toBe(join(dir, "etc/dashboards"));
    expect(config.facilitator.headers).toEqual({ Authorization: "Bearer abc" });
    expect(config.tables.map((table) => table.name)).toEqual(["swaps", "blocks"]);
  });

  test("env defaults to process.env", () => {
    const path = writeConfig("env.yaml", "database: { sqlite: x.sqlite }\ntables: [{ name: \"${ARROW402_FILE_TEST}\" }]\n");
    process.env.ARROW402_FILE_TEST = "t1";
    try {
      expect(loadConfigFile(path).tables[0]!.name).toBe("t1");
    } finally {
      delete process.env.ARROW402_FILE_TEST;
    }
  });

  test("an unquoted amount in YAML is refused with a hint to quote it", () => {
    const path = writeConfig(
      "unquoted.yaml",
      [
        "database: { sqlite: x.sqlite }",
        "tables:",
        "  - name: items",
        "    price_tags:",
        '      - { type: per_row, pay_to: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", token: usdc/base, amount_per_item: 0.1 }',
      ].join("\n"),
    );
    expect(problemsLoading(path)).toEqual([
      'tables[0].price_tags[0].amount_per_item: got the number 0.1; write the amount as a quoted decimal string, e.g. "0.002"',
    ]);
  });

  test("a YAML syntax error is one problem with the file and the line", () => {
    const path = writeConfig("broken.yaml", "database:\n  sqlite: x.sqlite\ntables: [{ name: a }\nlimits:\n  max_rows: 5\n");
    const problems = problemsLoading(path);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toStartWith(`${path}:3: invalid YAML`);
  });

  test("a YAML error after a valid multi-line construct points at the bad line", () => {
    const path = writeConfig("broken2.yaml", "tables: [\n  { name: a }\n]\ndatabase:\n  sqlite: x\n   bad: : indentation\n");
    const problems = problemsLoading(path);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toStartWith(`${path}:6: invalid YAML`);
  });

  test("an empty file", () => {
    expect(problemsLoading(writeConfig("empty.yaml", "# nothing yet\n"))).toEqual([
      "(top level): got an empty value; the config must be a mapping with at least database: (sqlite:) and tables:",
    ]);
  });

  test("a missing file", () => {
    const path = join(dir, "missing.yaml");
    const problems = problemsLoading(path);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toStartWith(`${path}: cannot read the config file (ENOENT)`);
  });
});
