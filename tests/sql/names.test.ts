/**
 * Names compare as SQLite compares them (identifiers.ts): ignoring the case of ASCII letters only.
 * "Ab" and "AB" are one column; "É" and "é" are two, and so are the tables "Été" and "été". The
 * select-list cap and ORDER BY's "each column once" count the catalog columns names resolve to; the
 * catalog, the config and a validation worker look names up the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../src/engines/sqlite/catalog.ts";
import { BadRequestError } from "../../src/errors.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { createQueryValidator, type QueryValidator } from "../../src/sql/validator.ts";
import { tempDir } from "../support/fixtures.ts";

let catalog: Catalog;
let validator: QueryValidator;

beforeAll(() => {
  const dir = tempDir();
  const path = join(dir, "names.sqlite");
  const db = new Database(path, { create: true });
  db.run('CREATE TABLE accents ("É" TEXT, "é" TEXT, "Ab" TEXT)');
  db.run('CREATE TABLE "Été" (summer TEXT)');
  db.run('CREATE TABLE "été" (been TEXT)');
  db.close();
  const config = resolveConfig(
    {
      database: { sqlite: path },
      ledger: { path: join(dir, "l.sqlite") },
      tables: [{ name: "accents", columns: { AB: "one letter case away", "é": "small e" } }, { name: "Été" }, { name: "été" }],
    },
    { baseDir: dir, env: {} },
  );
  const reader = openReadOnly(path);
  const read = readCatalog(reader, config.tables);
  reader.close();
  expect(read.problems).toEqual([]);
  catalog = read.catalog;
  validator = createQueryValidator(catalog, { maxQueryBytes: 16384 });
});
afterAll(() => validator.close());

const validate = (sql: string) => validateQuery(sql, catalog, { maxQueryBytes: 16384 });
const columnOf = (name: string) => catalog.table("accents")!.columns.find((c) => c.name === name)!;

describe("the catalog", () => {
  test.each([
    ["Été", "Été"],
    ["été", "été"],
    ["ÉTÉ", undefined],
  ])("table(%p) is %p", (name, found) => {
    expect(catalog.table(name)?.name).toBe(found);
  });

  test("a configured description goes to the column SQLite would name so", () => {
    const descriptions = Object.fromEntries(catalog.table("accents")!.columns.map((c) => [c.name, c.description]));
    expect(descriptions).toEqual({ "É": undefined, "é": "small e", Ab: "one letter case away" });
  });
});

describe("accepted", () => {
  /** [query, the catalog column of each output column]. */
  test.each([
    ['SELECT "É", "é" FROM accents', ["É", "é"]],
    ['SELECT "É" AS "à", "é" AS "À" FROM accents', ["É", "é"]],
    ['SELECT "É" FROM accents ORDER BY "É", "é" DESC', ["É"]],
    ['SELECT "é" AS x FROM accents ORDER BY x, "É"', ["é"]],
    ['SELECT "É", "É" AS a, "É" AS b, "É" AS c, "é", "é" AS d, "é" AS e, "é" AS f FROM accents', ["É", "É", "É", "É", "é", "é", "é", "é"]],
    ["SELECT ab, AB AS x, aB AS y FROM accents ORDER BY x", ["Ab", "Ab", "Ab"]],
  ])("%s", (sql, columns) => {
    expect(validate(sql).columns.map((c) => c.column)).toEqual(columns.map(columnOf));
  });

  test.each([
    ['SELECT summer FROM "Été"', "Été"],
    ['SELECT been FROM "été"', "été"],
  ])("%s queries %s", (sql, table) => {
    expect(validate(sql).table).toBe(catalog.table(table)!);
  });
});

describe("refused", () => {
  test.each([
    ['SELECT "É" FROM accents ORDER BY "É", "É" DESC', "ORDER BY sorts by column 'É' twice"],
    ['SELECT "É" AS x FROM accents ORDER BY x, "É"', "ORDER BY sorts by column 'É' twice"],
    ['SELECT ab FROM accents ORDER BY AB, "Ab" DESC', "ORDER BY sorts by column 'Ab' twice"],
    ['SELECT "É", "É" AS a, "É" AS b, "É" AS c, "É" AS d FROM accents', "Column 'É' is named more than 4 times"],
    ['SELECT ab, AB AS a, "Ab" AS b, aB AS c, AB AS d FROM accents', "Column 'Ab' is named more than 4 times"],
    ['SELECT "É" AS x, "é" AS X FROM accents', "Duplicate output column name 'X'"],
    ['SELECT summer FROM "ÉTÉ"', "Unknown table '\"ÉTÉ\"'"],
    ['SELECT been FROM "Été"', "Unknown column 'been' in table 'Été'"],
  ])("%s", (sql, message) => {
    expect(() => validate(sql)).toThrow(message);
  });
});

describe("through a validation worker", () => {
  test.each([
    ['SELECT "é", "É" FROM accents ORDER BY "É" DESC, "é"', "accents", ["é", "É"]],
    ['SELECT been FROM "été" ORDER BY been', "été", ["been"]],
  ])("%s", async (sql, table, columns) => {
    const query = await validator.validate(sql);
    expect(query.table).toBe(catalog.table(table)!);
    expect(query.columns.map((c) => c.column)).toEqual(columns.map((name) => catalog.table(table)!.columns.find((c) => c.name === name)!));
  });

  test("ORDER BY one column twice is still refused there", async () => {
    await expect(validator.validate('SELECT "é" FROM accents ORDER BY "é", "é" DESC')).rejects.toBeInstanceOf(BadRequestError);
  });
});
