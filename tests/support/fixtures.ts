/**
 * Real SQLite files and real configs for the tests: every test database is a file in a fresh
 * temporary directory, opened by the server read-only.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { runRoot } from "./temp-root.ts";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";

/** A fresh folder inside this run's temporary root (temp-root.ts), removed when the run ends. */
export function tempDir(prefix = "arrow402-test-"): string {
  return mkdtempSync(join(runRoot(), prefix));
}

/**
 * `createTypesDatabase` in a fresh folder, plus `<table> (id INTEGER PRIMARY KEY, <column> TEXT)`
 * holding `rows` random hex texts of `bytes` bytes: a table large enough for a query to take
 * seconds. The database is returned open for more tables; the caller closes it.
 */
export function typesDatabaseWithBigTable(rows: number, options: { table?: string; column?: string; bytes?: number } = {}): { dir: string; db: Database } {
  const { table = "big", column = "s", bytes = 32 } = options;
  const dir = tempDir();
  const path = join(dir, "types.sqlite");
  createTypesDatabase(path);
  const db = new Database(path);
  db.run(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, ${column} TEXT)`);
  db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows}) INSERT INTO ${table} SELECT x, hex(randomblob(${bytes})) FROM c`);
  return { dir, db };
}

/** A database with one column per row of ARCHITECTURE.md §5, plus a free and a paid table. */
export function createTypesDatabase(path: string): void {
  const db = new Database(path, { create: true, strict: true, safeIntegers: true });
  db.run(`CREATE TABLE kinds (
    id INTEGER PRIMARY KEY, big INTEGER, label TEXT, note VARCHAR(20), data BLOB, score REAL,
    ok BOOLEAN, day DATE, at DATETIME, stamp TIMESTAMP, anything)`);
  const insert = db.prepare("INSERT INTO kinds VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  insert.run(1, 9007199254740993n, "alpha", "first", new Uint8Array([1, 2, 3]), 1.5, 1, "2026-01-31", "2026-01-31 12:34:56", 1767225600, "x");
  insert.run(2, -9223372036854775808n, "béta ✓", "", new Uint8Array([]), -0.25, 0, "1999-12-31", "2026-01-31T12:34:56.789Z", "2026-02-01T00:00:00+02:00", 42);
  insert.run(3, null, null, null, null, null, null, null, null, null, null);
  insert.run(4, 9223372036854775807n, "gamma", "third", new Uint8Array([255]), 1e300, 1, "2000-02-29", "1970-01-01", 0, 2.5);
  db.run(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, category TEXT)`);
  const item = db.prepare("INSERT INTO items VALUES (?1, ?2, ?3, ?4)");
  for (let i = 1; i <= 200; i++) item.run(i, `item-${i}`, i * 1.25, ["a", "b", "c"][i % 3]!);
  db.run("CREATE VIEW cheap_items AS SELECT id, name, price FROM items WHERE price < 50");
  db.close();
}

export const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

export function typesConfig(dir: string, overrides: Record<string, unknown> = {}): Config {
  return resolveConfig(
    {
      server: { bind: "127.0.0.1:0" },
      database: { sqlite: "types.sqlite" },
      ledger: { path: "ledger.sqlite" },
      tables: [
        { name: "kinds", description: "One column per Arrow type" },
        { name: "cheap_items", description: "A view" },
        {
          name: "items",
          description: "Paid items",
          price_tags: [
            { type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.001" },
            { type: "metadata_price", pay_to: PAY_TO, token: "usdc/base_sepolia", amount: "0.01" },
          ],
        },
      ],
      ...overrides,
    },
    { baseDir: dir, env: {} },
  );
}
