/** Which views only pick columns of one table (src/engines/sqlite/view-shape.ts): a table of shapes. */
import { describe, expect, test } from "bun:test";
import { projectedTable } from "../../src/engines/sqlite/view-shape.ts";

describe("projectedTable", () => {
  test.each([
    ["CREATE VIEW v AS SELECT a, b FROM t", "t"],
    ["CREATE VIEW v AS SELECT * FROM t", "t"],
    ["CREATE VIEW v AS SELECT a AS x, t.b, t.c AS y FROM t", "t"],
    ["CREATE VIEW v(x, y) AS SELECT a, b FROM t", "t"],
    ['CREATE VIEW "my v" AS SELECT "a b" FROM "My Table"', "My Table"],
    ["CREATE VIEW IF NOT EXISTS v AS SELECT a FROM t", "t"],
  ])("%s → %p", (sql, table) => {
    expect(projectedTable(sql)).toBe(table);
  });

  test.each([
    "CREATE VIEW v AS SELECT a FROM t WHERE a > 1",
    "CREATE VIEW v AS SELECT DISTINCT a FROM t",
    "CREATE VIEW v AS SELECT a FROM t ORDER BY a",
    "CREATE VIEW v AS SELECT a FROM t LIMIT 5",
    "CREATE VIEW v AS SELECT a, count(*) AS n FROM t GROUP BY a",
    "CREATE VIEW v AS SELECT a * 2 AS twice FROM t",
    "CREATE VIEW v AS SELECT upper(a) AS a FROM t",
    "CREATE VIEW v AS SELECT a FROM t JOIN u USING (a)",
    "CREATE VIEW v AS SELECT a FROM t, u",
    "CREATE VIEW v AS SELECT a FROM (SELECT a FROM t)",
    "CREATE VIEW v AS SELECT a FROM t UNION ALL SELECT a FROM u",
    "CREATE VIEW v AS WITH w AS (SELECT a FROM t) SELECT a FROM w",
    "CREATE VIEW v AS SELECT a FROM main.t",
    "CREATE VIEW v AS SELECT 1 AS one",
    "CREATE VIEW v AS SELECT a FROM t WINDOW w AS (ORDER BY a)",
    "CREATE TABLE t (a)",
    "not sql at all",
  ])("%s → null", (sql) => {
    expect(projectedTable(sql)).toBeNull();
  });
});
