/**
 * A real SQLite database in a temp dir for the Simplified SQL tests: tables covering the declared
 * types of ARCHITECTURE.md §5 (and no type), NULLs, a WITHOUT ROWID table, a view, a table whose columns
 * hide two of SQLite's rowid names, and a table that exists but is not configured.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openReadOnly, readCatalog, type Catalog } from "../../src/engines/sqlite/catalog.ts";
import type { TableConfig } from "../../src/config/types.ts";

const SCHEMA = `
CREATE TABLE swaps (
  id INTEGER PRIMARY KEY,
  pair TEXT NOT NULL,
  price REAL,
  volume INTEGER,
  active BOOLEAN,
  trade_date DATE,
  created_at DATETIME,
  payload BLOB,
  note,
  "order" TEXT,
  "Fee Rate" NUMERIC
);
CREATE INDEX swaps_pair ON swaps (pair);
INSERT INTO swaps VALUES
  (1, 'ETH/USDC', 101.5, 10, 1, '2024-01-01', '2024-01-01 10:00:00', X'0102', 'x', 'first', 0.003),
  (2, 'BTC/USDC', 42000.25, 2, 0, '2024-01-02', '2024-01-02 13:30:00', NULL, '50% off', 'second', 0.001),
  (3, 'ETH/DAI', NULL, 20, 1, '2024-01-03', '2024-01-03 23:59:59', X'', ' y', NULL, NULL),
  (4, 'SOL/USDC', 9.75, NULL, NULL, NULL, NULL, NULL, NULL, 'fourth', 0.002),
  (5, 'ETH/USDC', 99.5, -5, 0, '2023-12-31', '2023-12-31 00:00:00', X'FF', 'café', 'fifth', 0),
  (6, 'it''s', 0, 0, 1, '2024-02-29', '2024-02-29 12:00:01', NULL, 'z ', 'sixth', 0.5),
  (7, 'BTC/USDC', 43000, 1, 1, '2024-03-01', '2024-03-01 08:00:00', X'0102', 10, 'seventh', 0.004),
  (8, 'DOGE/DAI', 0.08, 1000, 0, '2024-03-02', '2024-03-02 09:15:00', NULL, NULL, NULL, NULL);
CREATE TABLE tokens (symbol TEXT PRIMARY KEY, decimals INTEGER NOT NULL, name TEXT) WITHOUT ROWID;
INSERT INTO tokens VALUES ('ETH', 18, 'Ether'), ('USDC', 6, 'USD Coin'), ('DAI', 18, NULL), ('BTC', 8, 'Bitcoin');
CREATE VIEW big_swaps AS SELECT id, pair, price FROM swaps WHERE price > 100;
-- Columns hide two of SQLite's rowid names; val equals each row's rowid (insertion order).
CREATE TABLE legacy ("_rowid_" TEXT, "rowid" TEXT, val INTEGER);
INSERT INTO legacy VALUES ('a', 'b', 1), ('c', 'd', 2);
CREATE TABLE hidden (secret TEXT);
`;

export const CONFIGURED = ["swaps", "tokens", "big_swaps", "legacy"];

export interface Fixture {
  db: Database;
  catalog: Catalog;
  close(): void;
}

export function makeFixture(): Fixture {
  const dir = mkdtempSync(join(tmpdir(), "arrow402-sql-"));
  const path = join(dir, "fixture.sqlite");
  const writer = new Database(path, { create: true });
  writer.run(SCHEMA);
  writer.close();
  const configs: TableConfig[] = CONFIGURED.map((name) => ({ name, database: "main", source: name, description: `${name} table`, columns: {}, priceTags: [] }));
  const db = openReadOnly(path);
  const { catalog, problems } = readCatalog(db, configs);
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return {
    db,
    catalog,
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
