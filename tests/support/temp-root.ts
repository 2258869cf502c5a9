/**
 * Every temporary folder of a test run lives under one root, removed once all test files have run
 * (bunfig.toml preloads this file, so the hook below is the run's, not one file's): repeated runs
 * leave nothing behind in the system's temporary folder.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let root: string | null = null;

/** This run's temporary root, made on first use. */
export function runRoot(): string {
  root ??= mkdtempSync(join(tmpdir(), "arrow402-run-"));
  return root;
}

afterAll(() => {
  if (root !== null) rmSync(root, { recursive: true, force: true });
});
