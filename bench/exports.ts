/**
 * Item 2: a free 1M-row export end to end over HTTP (the client reads, concatenates and decodes
 * the whole body, uncompressed) against the in-process bun:sqlite scan of the same query (in a
 * fresh process of its own, see scan-baseline.ts), interleaved run by run; from the same runs,
 * time to first byte. The server's peak RSS growth is measured on the first query of a fresh
 * server process each time: later queries reuse memory the allocator kept from earlier ones,
 * which would hide the growth. Measured for each export table (the issue's `transfers`, and
 * `wide_transfers` with wide text columns).
 */
import { join } from "node:path";
import { readArrow, queryUrl, type ArrowRead } from "./arrow-client.ts";
import { residentBytes, resetPeakRss, track, type ChildServer } from "./processes.ts";
import { mb, ms, runsOf, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";

export interface ExportTable {
  /** How the figures name it: the table's name. */
  label: string;
  sql: string;
  /** Rows the query returns; default: the table's row count. */
  rows?: number;
  /** Measured against the targets (default); otherwise listed only. */
  target?: boolean;
  /** Listed only, with the memory samples too. */
  memory?: boolean;
}

/** Fresh servers whose first query's memory growth is measured, per table. */
const RSS_SAMPLES = 3;
/** Time a fresh server is left idle before its memory is read (start-up allocations settle). */
const SETTLE_MS = 500;

/** One bare scan in a fresh process; its own timing, so process start-up does not count. */
async function bareScanMs(dbPath: string, sql: string, rowCount: number): Promise<number> {
  const child = track(Bun.spawn(["bun", join(import.meta.dir, "scan-baseline.ts"), dbPath, sql], { stdin: "ignore", stdout: "pipe", stderr: "inherit" }));
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`the scan baseline failed (exit ${child.exitCode}): ${output}`);
  const { ms, rows } = JSON.parse(output) as { ms: number; rows: number };
  if (rows !== rowCount) throw new Error(`the scan baseline read ${rows} rows of ${sql}, expected ${rowCount}`);
  return ms;
}

/** Peak RSS growth of a fresh server process while it serves its first export of `sql`. */
export async function firstQueryGrowth(startServer: () => Promise<ChildServer>, sql: string, rowCount: number): Promise<{ growth: number; bytes: number }> {
  const server = await startServer();
  try {
    await Bun.sleep(SETTLE_MS);
    resetPeakRss(server.pid);
    const before = residentBytes(server.pid).rss;
    const read = await readArrow(queryUrl(server.url, sql), { expectedRows: rowCount });
    return { growth: residentBytes(server.pid).peak - before, bytes: read.bytes };
  } finally {
    await server.stop();
  }
}

export async function measureExport(
  server: ChildServer,
  startServer: () => Promise<ChildServer>,
  table: ExportTable,
  dbPath: string,
  rowCount: number,
  runs: number,
): Promise<SectionResult> {
  const url = queryUrl(server.url, table.sql);
  const expectedRows = table.rows ?? rowCount;
  const scans: number[] = [];
  const reads: ArrowRead[] = [];
  const growth: number[] = [];
  // One unmeasured export warms the server (page cache, JIT, worker start-up); the baseline warms
  // itself with one unmeasured scan in its own process.
  await readArrow(url, { expectedRows });
  for (let run = 0; run < runs; run++) {
    scans.push(await bareScanMs(dbPath, table.sql, expectedRows));
    Bun.gc(true);
    reads.push(await readArrow(url, { expectedRows }));
  }
  if (table.target === false && table.memory !== true) return listedOnly(table, scans, reads, expectedRows, []);
  for (let run = 0; run < RSS_SAMPLES; run++) growth.push((await firstQueryGrowth(startServer, table.sql, rowCount)).growth);
  if (table.target === false) return listedOnly(table, scans, reads, expectedRows, growth);

  const scan = median(scans);
  const total = median(reads.map((r) => r.totalMs));
  const firstByte = median(reads.map((r) => r.firstByteMs));
  const firstByteShare = median(reads.map((r) => r.firstByteMs / r.totalMs));
  const payload = reads[0]!.bytes;
  const rss = median(growth);
  const name = table.label;
  return {
    checks: [
      { item: "2", figure: `${name}: free ${rowCount}-row export, read + decoded`, measured: ms(total), baseline: `bun:sqlite scan ${ms(scan)}`, ratio: total / scan, target: "≤ 1.15×", pass: total / scan <= 1.15 },
      { item: "2", figure: `${name}: time to first byte / total`, measured: ms(firstByte), baseline: `total ${ms(total)}`, ratio: firstByteShare, target: "≤ 0.10×", pass: firstByteShare <= 0.1 },
      { item: "2", figure: `${name}: server peak RSS growth (first query of a fresh server)`, measured: mb(rss), baseline: `Arrow payload ${mb(payload)}`, ratio: rss / payload, target: "≤ 2.00×", pass: rss / payload <= 2 },
    ],
    details: [
      { item: "2", name: `${name}: query`, value: `\`${table.sql}\`` },
      { item: "2", name: `${name}: bare scan \`db.query(sql).values()\` runs (fresh process each)`, value: runsOf(scans, ms) },
      { item: "2", name: `${name}: end-to-end runs (request → decoded table)`, value: runsOf(reads.map((r) => r.totalMs), ms) },
      { item: "2", name: `${name}: end-to-end throughput (median)`, value: `${((rowCount / total) * 1000 / 1e6).toFixed(2)} M rows/s, ${((payload / total) * 1000 / 1e6).toFixed(0)} MB/s` },
      { item: "2", name: `${name}: time to first byte runs`, value: runsOf(reads.map((r) => r.firstByteMs), ms) },
      { item: "2", name: `${name}: Arrow payload / body chunks received`, value: `${payload} bytes / ${median(reads.map((r) => r.chunks))} chunks` },
      { item: "2", name: `${name}: server peak RSS growth runs (fresh server each)`, value: runsOf(growth, mb) },
    ],
  };
}

/** An export shape listed without a target: its end-to-end time against its own scan. */
function listedOnly(table: ExportTable, scans: number[], reads: ArrowRead[], rows: number, growth: number[]): SectionResult {
  const scan = median(scans);
  const total = median(reads.map((r) => r.totalMs));
  const name = table.label;
  const payload = reads[0]!.bytes;
  const memory =
    growth.length === 0
      ? []
      : [{ item: "2", name: `${name}: server peak RSS growth / Arrow payload (median, fresh server each)`, value: `${mb(median(growth))} / ${mb(payload)} = ${(median(growth) / payload).toFixed(2)}× (runs ${runsOf(growth, mb)})` }];
  return {
    checks: [],
    details: [
      { item: "2", name: `${name}: query (no target)`, value: `\`${table.sql}\`, ${rows} rows` },
      { item: "2", name: `${name}: export read + decoded / bun:sqlite scan (median)`, value: `${ms(total)} / ${ms(scan)} = ${(total / scan).toFixed(2)}×` },
      { item: "2", name: `${name}: end-to-end runs`, value: runsOf(reads.map((r) => r.totalMs), ms) },
      { item: "2", name: `${name}: bare scan runs`, value: runsOf(scans, ms) },
      ...memory,
    ],
  };
}
