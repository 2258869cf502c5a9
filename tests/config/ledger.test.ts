import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/config/load.ts";
import { minimal } from "./examples.ts";
import { expectProblem, problemsOf } from "./support.ts";

const resolve = (ledger: unknown, env: Record<string, string> = {}) =>
  resolveConfig(minimal(ledger === undefined ? {} : { ledger }), { baseDir: "/srv/arrow402", env }).ledger;

describe("ledger: path or url", () => {
  test.each([
    ["no ledger section: the default file", undefined, { path: "/srv/arrow402/arrow402-ledger.sqlite" }],
    ["an empty section: the default file", {}, { path: "/srv/arrow402/arrow402-ledger.sqlite" }],
    ["a relative path, against the config's folder", { path: "state/ledger.sqlite" }, { path: "/srv/arrow402/state/ledger.sqlite" }],
    ["a postgres:// URL", { url: "postgres://a:b@db.example:5432/arrow402" }, { url: "postgres://a:b@db.example:5432/arrow402" }],
    ["a postgresql:// URL with parameters", { url: "postgresql://a@db/arrow402?sslmode=require" }, { url: "postgresql://a@db/arrow402?sslmode=require" }],
  ])("%s", (_name, ledger, expected) => {
    expect(resolve(ledger)).toEqual(expected);
  });

  test("${VAR} expands in the URL, so the password stays out of the file", () => {
    expect(resolve({ url: "postgres://arrow402:${LEDGER_PASSWORD}@db:5432/arrow402" }, { LEDGER_PASSWORD: "pw" })).toEqual({
      url: "postgres://arrow402:pw@db:5432/arrow402",
    });
  });

  const PASSWORD = "hunter2-secret";
  test.each([
    ["both path and url", { path: "l.sqlite", url: "postgres://db/arrow402" }, "ledger", "has both path and url; keep one"],
    ["a MySQL URL", { url: `mysql://root:${PASSWORD}@db/arrow402` }, "ledger.url", "is not a postgres:// or postgresql:// URL (it starts with mysql:)"],
    ["not a URL", { url: `db.example:5432` }, "ledger.url", "write e.g. postgres://"],
    ["an http URL", { url: `http://u:${PASSWORD}@db.example/arrow402` }, "ledger.url", "is not a postgres://"],
    ["no database", { url: `postgres://u:${PASSWORD}@db.example:5432` }, "ledger.url", "names no database; add it after the host"],
    ["no database, trailing slash", { url: `postgres://u:${PASSWORD}@db.example:5432/` }, "ledger.url", "names no database"],
    ["an empty url", { url: "" }, "ledger.url", "must not be empty"],
    ["url not text", { url: 5432 }, "ledger.url", "got the number 5432"],
    ["unknown key", { uri: "postgres://db/a" }, "ledger.uri", "unknown key"],
    ["the ledger is the database", { path: "./db.sqlite" }, "ledger.path", "is the published database"],
  ])("%s is reported at its path, without the password", (_name, ledger, path, fragment) => {
    const problems = problemsOf(minimal({ ledger }));
    expectProblem(problems, path, fragment);
    expect(problems).toHaveLength(1);
    expect(problems.join("\n")).not.toContain(PASSWORD);
  });
});
