import { expect } from "bun:test";
import { ConfigError } from "../../src/errors.ts";
import { resolveConfig } from "../../src/config/load.ts";

/** The problems resolveConfig reports for `raw`; fails the test when it does not throw a ConfigError. */
export function problemsOf(raw: unknown, env: Record<string, string | undefined> = {}): string[] {
  try {
    resolveConfig(raw, { baseDir: "/srv/arrow402", env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error("expected a ConfigError, but the config was accepted");
}

/** Asserts that exactly one problem is reported at `path` and that it says `fragment`. */
export function expectProblem(problems: string[], path: string, fragment: string): void {
  const atPath = problems.filter((problem) => problem.startsWith(`${path}: `));
  if (atPath.length !== 1) throw new Error(`expected one problem at ${path}, got:\n${problems.join("\n")}`);
  expect(atPath[0]).toContain(fragment);
}
