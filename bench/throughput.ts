/**
 * Items 1 and 2: a free 1M-row × 6-column query end to end over HTTP (client reads and decodes
 * the whole body) against the in-process bun:sqlite scan of the same query (in a fresh process of
 * its own, see scan-baseline.ts), interleaved run by run; from the same runs, time to first byte. The server's peak RSS growth is measured on the
 * first query of a fresh server process each time: later queries reuse memory the allocator kept
 * from earlier ones, which would hide the growth.
 */
import { join } from "node:path";
import { readArrow, queryUrl, type ArrowRead } from "./arrow-client.ts";
import { TABLE_SQL } from "./dataset.ts";
import { residentBytes, resetPeakRss, type ChildServer } from "./processes.ts";
import { mb, ms, runsOf, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";

/** One bare scan in a fresh process; its own timing, so process start-up does not count. */
async function bareScanMs(dbPath: string, rowCount: number): Promise<number> {
  const child = Bun.spawn(["bun", join(import.meta.dir, "scan-baseline.ts"), dbPath, TABLE_SQL], { stdout: "pipe", stderr: "inherit" });
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`scan baseline failed: ${output}`);
  const { ms, rows } = JSON.parse(output) as { ms: number; rows: number };
  if (rows !== rowCount) throw new Error(`scan baseline read ${rows} rows, expected ${rowCount}`);
  return ms;
}

/** Peak RSS growth of a fresh server process while it serves its first 1M-row query. */
async function firstQueryGrowth(startServer: () => Promise<ChildServer>): Promise<{ growth: number; bytes: number }> {
  const server = await startServer();
  try {
    await Bun.sleep(500);
    resetPeakRss(server.pid);
    const before = residentBytes(server.pid).rss;
    const read = await readArrow(queryUrl(server.url, TABLE_SQL));
    return { growth: residentBytes(server.pid).peak - before, bytes: read.bytes };
  } finally {
    await server.stop();
  }
}

export async function measureThroughput(
  server: ChildServer,
  startServer: () => Promise<ChildServer>,
  dbPath: string,
  rowCount: number,
  runs: number,
): Promise<SectionResult> {
  const url = queryUrl(server.url, TABLE_SQL);
  const scans: number[] = [];
  const reads: ArrowRead[] = [];
  const growth: number[] = [];
  // One unmeasured round warms both sides (page cache, JIT, worker start-up).
  await readArrow(url);
  for (let run = 0; run < runs; run++) {
    scans.push(await bareScanMs(dbPath, rowCount));
    Bun.gc(true);
    const read = await readArrow(url);
    if (read.rows !== rowCount) throw new Error(`expected ${rowCount} rows, got ${read.rows}`);
    reads.push(read);
  }
  for (let run = 0; run < Math.min(runs, 3); run++) growth.push((await firstQueryGrowth(startServer)).growth);

  const scan = median(scans);
  const total = median(reads.map((r) => r.totalMs));
  const firstByte = median(reads.map((r) => r.firstByteMs));
  const firstByteShare = median(reads.map((r) => r.firstByteMs / r.totalMs));
  const payload = reads[0]!.bytes;
  const rss = median(growth);
  return {
    checks: [
      { item: "1", figure: "free 1M-row query over HTTP, read + decoded", measured: ms(total), baseline: `bun:sqlite scan ${ms(scan)}`, ratio: total / scan, target: "≤ 1.50×", pass: total / scan <= 1.5 },
      { item: "2", figure: "time to first byte / total", measured: ms(firstByte), baseline: `total ${ms(total)}`, ratio: firstByteShare, target: "≤ 0.10×", pass: firstByteShare <= 0.1 },
      { item: "2", figure: "server peak RSS growth (first query of a fresh server)", measured: mb(rss), baseline: `Arrow payload ${mb(payload)}`, ratio: rss / payload, target: "≤ 2.00×", pass: rss / payload <= 2 },
    ],
    details: [
      { item: "1", name: "bare scan `db.query(sql).values()` runs (fresh process each)", value: runsOf(scans, ms) },
      { item: "1", name: "end-to-end runs (request → decoded table)", value: runsOf(reads.map((r) => r.totalMs), ms) },
      { item: "1", name: "end-to-end throughput (median)", value: `${((rowCount / total) * 1000 / 1e6).toFixed(2)} M rows/s, ${((payload / total) * 1000 / 1e6).toFixed(0)} MB/s` },
      { item: "2", name: "time to first byte runs", value: runsOf(reads.map((r) => r.firstByteMs), ms) },
      { item: "2", name: "Arrow payload / body chunks received", value: `${payload} bytes / ${median(reads.map((r) => r.chunks))} chunks` },
      { item: "2", name: "server peak RSS growth runs (fresh server each)", value: runsOf(growth, mb) },
    ],
  };
}
