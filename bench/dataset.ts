/**
 * The benchmark table (issue: 1,000,000 rows × 6 columns of int, int, ISO timestamp text,
 * address text, nullable real, int), generated once with a fixed seed and cached, plus the views
 * the payment benchmark sells: `fixed_transfers` (fixed price) and `per_row_transfers` (per row).
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { EncoderColumn } from "../src/arrow/encode.ts";

export const BENCH_OUT = join(import.meta.dir, "out");
export const TABLE_SQL = "SELECT id, block, ts, address, amount, nonce FROM transfers";

export const TRANSFER_COLUMNS: EncoderColumn[] = [
  { name: "id", kind: "int64", nullable: false },
  { name: "block", kind: "int64", nullable: false },
  { name: "ts", kind: "timestamp", nullable: false },
  { name: "address", kind: "utf8", nullable: false },
  { name: "amount", kind: "float64", nullable: true },
  { name: "nonce", kind: "int64", nullable: false },
];

export function datasetPath(rowCount: number): string {
  return join(BENCH_OUT, `transfers-${rowCount}.sqlite`);
}

/** The dataset's path, generating it first if it is not cached yet (about 10 s for 1M rows). */
export function ensureDataset(rowCount: number, path = datasetPath(rowCount)): string {
  if (existsSync(path)) return path;
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(partial, { create: true });
  db.run(
    "CREATE TABLE transfers (id INTEGER PRIMARY KEY, block INTEGER NOT NULL, ts TIMESTAMP NOT NULL, address TEXT NOT NULL, amount REAL, nonce INTEGER NOT NULL)",
  );
  const insert = db.prepare("INSERT INTO transfers VALUES (?, ?, ?, ?, ?, ?)");
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  db.transaction(() => {
    for (let i = 1; i <= rowCount; i++) {
      const ts = new Date(1_700_000_000_000 + i * 1000).toISOString().slice(0, 19).replace("T", " ");
      let address = "0x";
      for (let k = 0; k < 40; k++) address += "0123456789abcdef"[Math.floor(random() * 16)];
      const amount = random() < 0.1 ? null : Math.round(random() * 1e8) / 100;
      insert.run(i, 18_000_000 + Math.floor(i / 12), ts, address, amount, Math.floor(random() * 2 ** 40));
    }
  })();
  db.run("CREATE VIEW fixed_transfers AS SELECT * FROM transfers");
  db.run("CREATE VIEW per_row_transfers AS SELECT * FROM transfers");
  db.close();
  renameSync(partial, path);
  return path;
}
