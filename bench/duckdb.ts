/**
 * Item 8: Parquet tables served through DuckDB (README "Parquet and DuckDB tables").
 *
 * - The dataset's 1M-row `transfers` as Parquet, exported end to end (request → decoded Arrow
 *   table, as item 2) against DuckDB reading the same rows in process into JavaScript values
 *   (duckdb-baseline.ts, a fresh process each run), interleaved run by run.
 * - The server's peak RSS growth on that export, first query of a fresh server each time (as item 2).
 * - Filtered queries over 10M rows (lake.ts), the same text through arrow402 on the Parquet files
 *   (DuckDB) and on the same rows in a SQLite file (SQLite engine), interleaved run by run.
 *
 * Each engine is its own server process; the DuckDB server serves no SQLite table and vice versa.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { freshDir, startArrow402, writeConfig } from "./arrow402.ts";
import { queryUrl, readArrow, type ArrowRead } from "./arrow-client.ts";
import { COLUMNS, TABLE_SQL } from "./dataset.ts";
import { firstQueryGrowth } from "./exports.ts";
import { ensureScanTables, ensureTransfersParquet, SCAN_ROWS } from "./lake.ts";
import { track, type ChildServer } from "./processes.ts";
import { mb, ms, runsOf, type Check, type Detail, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";

/** Fresh servers whose first export's memory growth is measured. */
const RSS_SAMPLES = 3;
const RSS_LIMIT = 64e6;
const EXPORT_RATIO = 1.25;

/** What buyers send over a large table: a range on a numeric column, a prefix of an address; neither indexed. */
export const SCAN_QUERIES = [
  { label: "amount range", sql: `SELECT ${COLUMNS} FROM transfers_10m WHERE amount >= 500000 AND amount < 500500` },
  { label: "address prefix", sql: `SELECT ${COLUMNS} FROM transfers_10m WHERE address LIKE '0xabc%'` },
];

type BaselineMode = "read-all" | "stream";

/** One in-process DuckDB read in a fresh process; its own timing, so process start-up does not count. */
async function duckInProcessMs(glob: string, sql: string, rows: number, mode: BaselineMode): Promise<number> {
  const child = track(
    Bun.spawn(["bun", join(import.meta.dir, "duckdb-baseline.ts"), glob, "transfers", sql, mode], { stdin: "ignore", stdout: "pipe", stderr: "inherit" }),
  );
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`the DuckDB baseline failed (exit ${child.exitCode}): ${output}`);
  const result = JSON.parse(output) as { ms: number; rows: number };
  if (result.rows !== rows) throw new Error(`the DuckDB baseline read ${result.rows} rows of ${sql}, expected ${rows}`);
  return result.ms;
}

export async function measureDuckdb(dbPath: string, rowCount: number, runs: number, log: (line: string) => void): Promise<SectionResult> {
  log("item 8: Parquet files (written by DuckDB, cached in bench/out/)");
  const parquet = await ensureTransfersParquet(dbPath, rowCount);
  const scan = await ensureScanTables();
  const dir = freshDir("duckdb");
  // A 10M-row scan on SQLite takes seconds on a loaded machine: the default 10 s limit would stop it.
  const limits = { query_timeout_ms: 600_000 };
  const duckConfig = writeConfig(dir, {
    databases: { lake: { duckdb: ":memory:" } },
    ledger: { path: join(dir, "ledger-duckdb.sqlite") },
    limits,
    tables: [
      { name: "transfers", files: parquet.glob },
      { name: "transfers_10m", files: scan.parquet.glob },
    ],
  }, "duckdb.yaml");
  const sqliteConfig = writeConfig(dir, {
    database: { sqlite: scan.sqlitePath },
    ledger: { path: join(dir, "ledger-sqlite.sqlite") },
    limits,
    tables: [{ name: "transfers_10m" }],
  }, "sqlite.yaml");
  const startDuck = () => startArrow402(duckConfig);

  const checks: Check[] = [];
  const details: Detail[] = [];
  const duck = await startDuck();
  try {
    log("item 8: export of the Parquet transfers");
    const url = queryUrl(duck.url, TABLE_SQL);
    // One unmeasured export warms the server; each baseline warms itself with one unmeasured read.
    await readArrow(url, { expectedRows: rowCount });
    const baselines: number[] = [];
    const streams: number[] = [];
    const reads: ArrowRead[] = [];
    for (let run = 0; run < runs; run++) {
      baselines.push(await duckInProcessMs(parquet.glob, TABLE_SQL, rowCount, "read-all"));
      streams.push(await duckInProcessMs(parquet.glob, TABLE_SQL, rowCount, "stream"));
      Bun.gc(true);
      reads.push(await readArrow(url, { expectedRows: rowCount }));
    }
    const growth: number[] = [];
    let payload = 0;
    for (let run = 0; run < RSS_SAMPLES; run++) {
      const sample = await firstQueryGrowth(startDuck, TABLE_SQL, rowCount);
      growth.push(sample.growth);
      payload = sample.bytes;
    }
    const total = median(reads.map((r) => r.totalMs));
    const baseline = median(baselines);
    const stream = median(streams);
    const rss = median(growth);
    checks.push(
      {
        item: "8",
        figure: `transfers as Parquet (DuckDB): free ${rowCount}-row export, read + decoded`,
        measured: ms(total),
        baseline: `DuckDB in process ${ms(baseline)}`,
        ratio: total / baseline,
        target: `≤ ${EXPORT_RATIO.toFixed(2)}×`,
        pass: total / baseline <= EXPORT_RATIO,
      },
      {
        item: "8",
        figure: "transfers as Parquet (DuckDB): server peak RSS growth (first query of a fresh server)",
        measured: mb(rss),
        baseline: `Arrow payload ${mb(payload)}`,
        ratio: null,
        target: `≤ ${mb(RSS_LIMIT)}`,
        pass: rss <= RSS_LIMIT,
      },
    );
    details.push(
      { item: "8", name: "transfers as Parquet: query", value: `\`${TABLE_SQL}\`, one Parquet file written by DuckDB from the dataset's rows` },
      { item: "8", name: "transfers as Parquet: in-process DuckDB `runAndReadAll(sql)` + `getRows()` runs (fresh process each)", value: runsOf(baselines, ms) },
      {
        item: "8",
        name: "transfers as Parquet: in-process DuckDB `stream(sql)` + `fetchChunk()` + `chunk.getRows()` runs (no target; the engine's way)",
        value: `${runsOf(streams, ms)}; export / this = ${(total / stream).toFixed(2)}×`,
      },
      { item: "8", name: "transfers as Parquet: end-to-end runs (request → decoded table)", value: runsOf(reads.map((r) => r.totalMs), ms) },
      { item: "8", name: "transfers as Parquet: time to first byte runs", value: runsOf(reads.map((r) => r.firstByteMs), ms) },
      { item: "8", name: "transfers as Parquet: server peak RSS growth runs (fresh server each)", value: runsOf(growth, mb) },
    );

    const sqlite = await startArrow402(sqliteConfig);
    try {
      for (const query of SCAN_QUERIES) {
        log(`item 8: ${query.label} over ${SCAN_ROWS} rows, DuckDB and SQLite`);
        checks.push(...(await compareScan(duck, sqlite, scan.sqlitePath, query, runs, details)));
      }
    } finally {
      await sqlite.stop();
    }
  } finally {
    await duck.stop();
  }
  return { checks, details };
}

/** One filtered query on both servers, interleaved run by run after one unmeasured run each. */
async function compareScan(
  duck: ChildServer,
  sqlite: ChildServer,
  sqlitePath: string,
  query: { label: string; sql: string },
  runs: number,
  details: Detail[],
): Promise<Check[]> {
  const db = new Database(sqlitePath, { readonly: true });
  const expectedRows = Number((db.query(`SELECT count(*) FROM (${query.sql})`).values()[0] as [number])[0]);
  db.close();
  if (expectedRows === 0) throw new Error(`${query.sql} returns no rows: pick a filter that returns some`);
  const duckUrl = queryUrl(duck.url, query.sql);
  const sqliteUrl = queryUrl(sqlite.url, query.sql);
  await readArrow(duckUrl, { expectedRows });
  await readArrow(sqliteUrl, { expectedRows });
  const duckMs: number[] = [];
  const sqliteMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    duckMs.push((await readArrow(duckUrl, { expectedRows })).totalMs);
    sqliteMs.push((await readArrow(sqliteUrl, { expectedRows })).totalMs);
  }
  const d = median(duckMs);
  const s = median(sqliteMs);
  details.push(
    { item: "8", name: `${SCAN_ROWS}-row ${query.label}: query`, value: `\`${query.sql}\`, ${expectedRows} rows` },
    { item: "8", name: `${SCAN_ROWS}-row ${query.label}: DuckDB (Parquet) runs, request → decoded table`, value: runsOf(duckMs, ms) },
    { item: "8", name: `${SCAN_ROWS}-row ${query.label}: SQLite engine (same rows) runs`, value: runsOf(sqliteMs, ms) },
  );
  return [
    {
      item: "8",
      figure: `${SCAN_ROWS}-row Parquet, ${query.label} (${expectedRows} rows): DuckDB engine / SQLite engine`,
      measured: ms(d),
      baseline: `SQLite engine ${ms(s)}`,
      ratio: d / s,
      target: "< 1.00×",
      pass: d < s,
    },
  ];
}
