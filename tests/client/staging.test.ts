/**
 * Where the CLI keeps an answer while it arrives (src/client/staging.ts, DESIGN §17): beside
 * `--output`, renamed over it once complete, or in $TMPDIR on the way to stdout; nothing left
 * behind either way.
 */
import { afterAll, expect, test } from "bun:test";
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stage } from "../../src/client/staging.ts";
import { tempDir } from "../support/fixtures.ts";

const dir = tempDir("arrow402-client-staging-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("--output FILE: the body is kept beside it, and the rendered output replaces FILE only when delivered", async () => {
  const file = join(dir, "rows.csv");
  writeFileSync(file, "old\n");
  const staged = stage(file);
  if (!staged.ok) throw new Error(staged.reason);
  const { staging } = staged;
  expect(staging.regularFile).toBe(true);
  expect(readdirSync(dir).sort()).toEqual([`.rows.csv.${process.pid}.arrow402-part`, "rows.csv"]);
  writeFileSync(staging.body, "body");
  expect(readFileSync(file, "utf8")).toBe("old\n");
  await staging.deliver(["a,b\n", "1,2\n"], false);
  staging.cleanup();
  expect(readFileSync(file, "utf8")).toBe("a,b\n1,2\n");
  expect(readdirSync(dir)).toEqual(["rows.csv"]);
  rmSync(file);
});

test("a binary answer is renamed into place; a symbolic link to the output stays a link", async () => {
  writeFileSync(join(dir, "real.arrow"), "old");
  symlinkSync("real.arrow", join(dir, "link.arrow"));
  const staged = stage(join(dir, "link.arrow"));
  if (!staged.ok) throw new Error(staged.reason);
  writeFileSync(staged.staging.body, "arrow bytes");
  await staged.staging.deliver([], true);
  staged.staging.cleanup();
  expect(lstatSync(join(dir, "link.arrow")).isSymbolicLink()).toBe(true);
  expect(readFileSync(join(dir, "real.arrow"), "utf8")).toBe("arrow bytes");
  expect(readdirSync(dir).sort()).toEqual(["link.arrow", "real.arrow"]);
  rmSync(join(dir, "link.arrow"));
  rmSync(join(dir, "real.arrow"));
});

test("stdout: the body is kept in $TMPDIR, removed at cleanup; CSV is then not written exact", () => {
  const tmp = join(dir, "tmp");
  mkdirSync(tmp);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    const staged = stage(null);
    if (!staged.ok) throw new Error(staged.reason);
    expect(staged.staging.regularFile).toBe(false);
    expect(staged.staging.body.startsWith(tmp)).toBe(true);
    writeFileSync(staged.staging.body, "body");
    staged.staging.cleanup();
    staged.staging.cleanup();
    expect(readdirSync(tmp)).toEqual([]);
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
});

test.each([
  ["a directory", () => dir, `--output ${dir} is a directory: give a file name`],
  ["a file in a directory that does not exist", () => join(dir, "none", "x.csv"), `cannot write --output ${join(dir, "none", "x.csv")}: there is no directory ${join(dir, "none")}; nothing was paid`],
])("--output naming %s is refused before any request", (_name, output, reason) => {
  expect(stage(output())).toEqual({ ok: false, reason });
});
