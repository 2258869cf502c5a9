/**
 * The benchmark database, generated once with a fixed seed and cached in bench/out/:
 *
 * - `transfers`: the issue's table, N rows (1,000,000 by default) × 6 columns of int, int, ISO
 *   timestamp (declared TIMESTAMP: an Arrow timestamp), 42-char hex address, nullable real, int;
 *   with an index on `block` (12 rows per block) for the indexed lookups of the small queries.
 * - `transfers_1k`: its first 1,000 rows, same schema and index (the small queries' small table).
 * - `wide_transfers`: the same N rows with `ts` declared TEXT (it stays text in Arrow) and a
 *   64-hex-char `tx_hash`: wide text columns, as in the issue's probe table.
 * - `fixed_transfers`, `per_row_transfers`: views over `transfers` sold by the payment benchmarks.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { EncoderColumn } from "../src/arrow/encode.ts";

export const BENCH_OUT = join(import.meta.dir, "out");
export const COLUMNS = "id, block, ts, address, amount, nonce";
export const TABLE_SQL = `SELECT ${COLUMNS} FROM transfers`;
export const WIDE_TABLE_SQL = `SELECT ${COLUMNS}, tx_hash FROM wide_transfers`;
/** Text-heavy rows of another shape: ISO-8601 timestamp text, 42-character hex, REAL with one NULL in seven, INTEGER. */
export const MIXED_TABLE_SQL = "SELECT at, address, amount, n FROM mixed_transfers";
/** The `transfers` export filtered as a buyer might: the rows with an amount (90%). */
export const FILTERED_TABLE_SQL = `${TABLE_SQL} WHERE amount >= 0`;
/** Rows of `transfers_1k`. */
export const SMALL_TABLE_ROWS = 1_000;
/** First block number; row i is in block FIRST_BLOCK + floor(i / ROWS_PER_BLOCK). */
export const FIRST_BLOCK = 18_000_000;
export const ROWS_PER_BLOCK = 12;

export const TRANSFER_COLUMNS: EncoderColumn[] = [
  { name: "id", kind: "int64", nullable: false },
  { name: "block", kind: "int64", nullable: false },
  { name: "ts", kind: "timestamp", nullable: false },
  { name: "address", kind: "utf8", nullable: false },
  { name: "amount", kind: "float64", nullable: true },
  { name: "nonce", kind: "int64", nullable: false },
];

export function datasetPath(rowCount: number): string {
  return join(BENCH_OUT, `bench-v4-${rowCount}.sqlite`);
}

/** The database's path, generating it first if it is not cached yet (about 20 s for 1M rows). */
export function ensureDataset(rowCount: number, path = datasetPath(rowCount)): string {
  if (existsSync(path)) return path;
  if (!Number.isInteger(rowCount) || rowCount < SMALL_TABLE_ROWS) throw new Error(`--rows must be an integer of at least ${SMALL_TABLE_ROWS}, got ${rowCount}`);
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(partial, { create: true });
  db.run(
    "CREATE TABLE transfers (id INTEGER PRIMARY KEY, block INTEGER NOT NULL, ts TIMESTAMP NOT NULL, address TEXT NOT NULL, amount REAL, nonce INTEGER NOT NULL)",
  );
  db.run(
    "CREATE TABLE wide_transfers (id INTEGER PRIMARY KEY, block INTEGER NOT NULL, ts TEXT NOT NULL, address TEXT NOT NULL, amount REAL, nonce INTEGER NOT NULL, tx_hash TEXT NOT NULL)",
  );
  db.run("CREATE TABLE mixed_transfers (id INTEGER PRIMARY KEY, at TEXT NOT NULL, address TEXT NOT NULL, amount REAL, n INTEGER NOT NULL)");
  const insert = db.prepare("INSERT INTO transfers VALUES (?, ?, ?, ?, ?, ?)");
  const insertMixed = db.prepare("INSERT INTO mixed_transfers VALUES (?, ?, ?, ?, ?)");
  const insertWide = db.prepare("INSERT INTO wide_transfers VALUES (?, ?, ?, ?, ?, ?, ?)");
  const random = mulberry32(42);
  db.transaction(() => {
    for (let i = 1; i <= rowCount; i++) {
      const ts = new Date(1_700_000_000_000 + i * 1000).toISOString().slice(0, 19).replace("T", " ");
      let address = "0x";
      for (let k = 0; k < 40; k++) address += "0123456789abcdef"[Math.floor(random() * 16)];
      const amount = random() < 0.1 ? null : Math.round(random() * 1e8) / 100;
      const row = [i, FIRST_BLOCK + Math.floor(i / ROWS_PER_BLOCK), ts, address, amount, Math.floor(random() * 2 ** 40)] as const;
      insert.run(...row);
      insertWide.run(...row, new Bun.CryptoHasher("sha256").update(`transfer ${i}`).digest("hex"));
      insertMixed.run(i, new Date(1_700_000_000_000 + i * 1000).toISOString(), address, i % 7 === 0 ? null : i * 0.25, i * 3);
    }
  })();
  db.run("CREATE INDEX transfers_block ON transfers (block)");
  db.run(
    "CREATE TABLE transfers_1k (id INTEGER PRIMARY KEY, block INTEGER NOT NULL, ts TIMESTAMP NOT NULL, address TEXT NOT NULL, amount REAL, nonce INTEGER NOT NULL)",
  );
  db.run(`INSERT INTO transfers_1k SELECT * FROM transfers WHERE id <= ${SMALL_TABLE_ROWS}`);
  db.run("CREATE INDEX transfers_1k_block ON transfers_1k (block)");
  db.run("CREATE VIEW fixed_transfers AS SELECT * FROM transfers");
  db.run("CREATE VIEW per_row_transfers AS SELECT * FROM transfers");
  db.close();
  renameSync(partial, path);
  return path;
}

/**
 * A seeded 32-bit generator (mulberry32) whose output bits are all usable: with a plain LCG, the top
 * bits of successive draws are correlated, so the hex addresses repeated patterns and compressed
 * ~25× — far better than real addresses, which would flatter the compression figures.
 */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Bytes of one table's b-tree (SQLite's dbstat): what one full pass over it reads. */
export function tableBytes(path: string, table: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const row = db.query("SELECT sum(pgsize) AS bytes FROM dbstat WHERE name = ?").get(table) as { bytes: number | null };
    if (!row.bytes) throw new Error(`${path} has no table or index named ${table}`);
    return row.bytes;
  } finally {
    db.close();
  }
}

/** Rows of FILTERED_TABLE_SQL, counted by bun:sqlite. */
export function filteredRows(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return Number((db.query(`SELECT count(*) FROM (${FILTERED_TABLE_SQL})`).values()[0] as [number])[0]);
  } finally {
    db.close();
  }
}
