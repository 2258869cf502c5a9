/**
 * The rowid alias and whether a table has a rowid, as the catalog reads them from SQLite (engines/sqlite/catalog.ts
 * `tableForm`), for every way of declaring a key that lang_createtable.html#rowid distinguishes:
 * `INTEGER PRIMARY KEY DESC` is no alias, while `PRIMARY KEY(x DESC)` is. Each verdict is checked
 * against SQLite's own behaviour on the same table (an alias takes no text: "datatype mismatch"),
 * and then through the dialect, which lets only the alias be named more than 4 times.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { resolveConfig } from "../../../src/config/load.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";

/** [table, columns and constraints of CREATE TABLE (and what follows its parenthesis), the alias, has a rowid]. */
const FORMS: [string, string, string | null, boolean][] = [
  ["plain", "x INTEGER PRIMARY KEY, y TEXT)", "x", true],
  ["ascending", "x INTEGER PRIMARY KEY ASC, y TEXT)", "x", true],
  ["descending", "x INTEGER PRIMARY KEY DESC, y TEXT)", null, true],
  ["named_descending", "x INTEGER CONSTRAINT k PRIMARY KEY DESC, y TEXT)", null, true],
  ["int_key", "x int primary key, y TEXT)", null, true],
  ["sized", "x INTEGER(8) PRIMARY KEY, y TEXT)", null, true],
  ["not_null", "x INTEGER NOT NULL PRIMARY KEY, y TEXT)", "x", true],
  ["lower_case", "x integer primary key autoincrement, y TEXT)", "x", true],
  ["table_key", "x INTEGER, y TEXT, PRIMARY KEY(x))", "x", true],
  ["table_key_desc", "x INTEGER, y TEXT, PRIMARY KEY(x DESC))", "x", true],
  ["composite", "x INTEGER, y INTEGER, PRIMARY KEY(x, y))", null, true],
  ["no_key", "x INTEGER, y TEXT)", null, true],
  ["without_rowid", "x INTEGER PRIMARY KEY, y TEXT) WITHOUT ROWID", null, false],
  // Read from SQLite, not from the CREATE text: a comment between the words, the words in a string.
  ["commented", "x INTEGER PRIMARY KEY, y TEXT) WITHOUT/* a comment */ROWID", null, false],
  ["worded", "x INTEGER PRIMARY KEY, y TEXT DEFAULT 'without rowid')", "x", true],
];

let catalog: Catalog;
let path: string;

beforeAll(() => {
  const dir = tempDir();
  path = join(dir, "keys.sqlite");
  const db = new Database(path, { create: true });
  for (const [name, rest] of FORMS) db.run(`CREATE TABLE ${name} (${rest}`);
  db.close();
  const config = resolveConfig(
    { database: { sqlite: path }, ledger: { path: join(dir, "l.sqlite") }, tables: FORMS.map(([name]) => ({ name })) },
    { baseDir: dir, env: {} },
  );
  const reader = openReadOnly(path);
  const read = readCatalog(reader, config.tables);
  reader.close();
  expect(read.problems).toEqual([]);
  catalog = read.catalog;
});

/** What SQLite does with a text key: an alias of the rowid refuses it, any other column keeps it. */
function takesText(table: string): boolean {
  const db = new Database(path);
  try {
    db.run("BEGIN");
    db.run(`INSERT INTO ${table} (x, y) VALUES ('not a number', 1)`);
    return true;
  } catch (error) {
    expect(String(error)).toContain("datatype mismatch");
    return false;
  } finally {
    if (db.inTransaction) db.run("ROLLBACK");
    db.close();
  }
}

describe("the rowid alias, as SQLite has it", () => {
  test.each(FORMS)("%s (%s): alias %p, rowid %p", (name, _, alias, hasRowid) => {
    const table = catalog.table(name)!;
    expect(table.hasRowid).toBe(hasRowid);
    expect(table.columns.filter((c) => c.rowidAlias).map((c) => c.name)).toEqual(alias === null ? [] : [alias]);
    // Outside a STRICT table, only the alias is kept to numbers.
    expect(table.columns.filter((c) => c.numbersOnly).map((c) => c.name)).toEqual(alias === null ? [] : [alias]);
    expect(takesText(name)).toBe(alias === null);
  });
});

describe("the select list names only the alias more than 4 times", () => {
  const fiveTimes = (table: string) => `SELECT x, x AS a, x AS b, x AS c, x AS d FROM ${table}`;
  test.each(FORMS)("%s", (name, _, alias) => {
    const validate = () => validateQuery(fiveTimes(name), catalog, { maxQueryBytes: 10_000 });
    if (alias === null) expect(validate).toThrow("Column 'x' is named more than 4 times in the select list");
    else expect(validate().columns).toHaveLength(5);
  });
});
