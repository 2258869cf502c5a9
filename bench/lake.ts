/**
 * Item 8's data (DuckDB tables), written by DuckDB itself and cached in bench/out/ like the dataset:
 *
 * - `lake-v1-<N>/transfers.parquet`: the dataset's `transfers` (bench/dataset.ts), the same N rows
 *   and values, copied out of the SQLite file through DuckDB's appender; `ts` a TIMESTAMP.
 * - `lake-v1-<M>/transfers.parquet` (M = 10,000,000): the same columns generated in DuckDB from the
 *   row number with seeded hashes (md5, hash(i, salt)): fixed values, no random state. Same shapes
 *   as the dataset: 12 rows per block, one second per row, 42-char hex addresses, 10% NULL
 *   amounts uniform in 0 … 1,000,000 (two decimals), 40-bit nonces.
 * - `lake-v1-<M>.sqlite`: the same M rows in a SQLite file (read back from that Parquet file), for
 *   the same queries through the SQLite engine; its table is `transfers_10m`, the name both servers
 *   give it (a SQLite table is served under its own name). `id` is the rowid; no other index, as the filters
 *   compared are on columns a buyer filters without one.
 */
import { Database } from "bun:sqlite";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BENCH_OUT, COLUMNS } from "./dataset.ts";

export const SCAN_ROWS = 10_000_000;

/** A Parquet folder and the glob of its files (`<dir>/*.parquet`). */
export interface ParquetTable {
  dir: string;
  glob: string;
}

const lakeDir = (rows: number) => join(BENCH_OUT, `lake-v1-${rows}`);
const quote = (path: string) => `'${path.replaceAll("'", "''")}'`;

/** Writes `<dir>/transfers.parquet` with `write` (a COPY … TO the path given), atomically: a folder renamed once complete. */
async function writeParquet(dir: string, write: (connection: DuckDBConnection, path: string) => Promise<void>): Promise<ParquetTable> {
  const table = { dir, glob: join(dir, "*.parquet") };
  if (existsSync(dir)) return table;
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await write(connection, join(partial, "transfers.parquet"));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  renameSync(partial, dir);
  return table;
}

/** The dataset's `transfers` as Parquet (about 10 s for 1M rows). */
export function ensureTransfersParquet(dbPath: string, rowCount: number): Promise<ParquetTable> {
  return writeParquet(lakeDir(rowCount), async (connection, path) => {
    await connection.run("CREATE TABLE staged (id BIGINT, block BIGINT, ts VARCHAR, address VARCHAR, amount DOUBLE, nonce BIGINT)");
    const appender = await connection.createAppender("staged");
    const db = new Database(dbPath, { readonly: true });
    try {
      for (const [id, block, ts, address, amount, nonce] of db.query(`SELECT ${COLUMNS} FROM transfers ORDER BY id`).values() as [number, number, string, string, number | null, number][]) {
        appender.appendBigInt(BigInt(id));
        appender.appendBigInt(BigInt(block));
        appender.appendVarchar(ts);
        appender.appendVarchar(address);
        if (amount === null) appender.appendNull();
        else appender.appendDouble(amount);
        appender.appendBigInt(BigInt(nonce));
        appender.endRow();
      }
    } finally {
      db.close();
    }
    appender.closeSync();
    await connection.run(`COPY (SELECT id, block, ts::TIMESTAMP AS ts, address, amount, nonce FROM staged ORDER BY id) TO ${quote(path)} (FORMAT parquet)`);
  });
}

/** The 10M-row table generated in DuckDB (a minute or so), and the same rows in SQLite. */
export async function ensureScanTables(rowCount = SCAN_ROWS): Promise<{ parquet: ParquetTable; sqlitePath: string }> {
  const parquet = await writeParquet(lakeDir(rowCount), async (connection, path) => {
    await connection.run(`COPY (
      SELECT i AS id, 18000000 + i // 12 AS block, TIMESTAMP '2023-11-14 22:13:20' + to_seconds(i) AS ts,
        '0x' || md5(i::VARCHAR) || left(md5('address ' || i::VARCHAR), 8) AS address,
        CASE WHEN hash(i, 'amount is null') % 10 = 0 THEN NULL ELSE (hash(i, 'amount') % 100000000)::DOUBLE / 100 END AS amount,
        (hash(i, 'nonce') % 1099511627776)::BIGINT AS nonce
      FROM range(1, ${rowCount + 1}) r(i) ORDER BY i
    ) TO ${quote(path)} (FORMAT parquet)`);
  });
  const sqlitePath = join(BENCH_OUT, `lake-v1-${rowCount}.sqlite`);
  if (!existsSync(sqlitePath)) await copyToSqlite(parquet, sqlitePath);
  return { parquet, sqlitePath };
}

/** The Parquet rows into a SQLite `transfers_10m` with the dataset's schema, chunk by chunk. */
async function copyToSqlite(parquet: ParquetTable, sqlitePath: string): Promise<void> {
  const partial = `${sqlitePath}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(partial, { create: true });
  db.run("PRAGMA journal_mode = OFF");
  db.run("PRAGMA synchronous = OFF");
  db.run("CREATE TABLE transfers_10m (id INTEGER PRIMARY KEY, block INTEGER NOT NULL, ts TIMESTAMP NOT NULL, address TEXT NOT NULL, amount REAL, nonce INTEGER NOT NULL)");
  const insert = db.prepare("INSERT INTO transfers_10m VALUES (?, ?, ?, ?, ?, ?)");
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const result = await connection.stream(
      `SELECT id, block, strftime(ts, '%Y-%m-%d %H:%M:%S') AS ts, address, amount, nonce FROM read_parquet(${quote(parquet.glob)}) ORDER BY id`,
    );
    const insertChunk = db.transaction((rows: unknown[][]) => {
      for (const row of rows) insert.run(...(row as [bigint, bigint, string, string, number | null, bigint]));
    });
    let pending: unknown[][] = [];
    for (;;) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) break;
      pending.push(...(chunk.getRows() as unknown[][]));
      if (pending.length >= 200_000) {
        insertChunk(pending);
        pending = [];
      }
    }
    insertChunk(pending);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  db.close();
  renameSync(partial, sqlitePath);
}
