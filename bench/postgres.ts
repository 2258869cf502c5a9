/**
 * Item 7: PostgreSQL tables. A real PostgreSQL 15 (tests/support/postgres.ts) holds `transfers`,
 * N rows generated in the server with a fixed seed; arrow402 serves it as a `databases:` postgres
 * source, as its own process.
 *
 * - Export: the N-row export read end to end (request → decoded Arrow table in this client,
 *   uncompressed) against PostgreSQL itself sending the same rows to a client, `psql` running
 *   `COPY (…) TO STDOUT (FORMAT binary)` into /dev/null (psql's own `\timing` of the statement:
 *   its start-up and connection do not count), runs alternating. Listed beside it: the driver
 *   (Bun.SQL) reading the rows in a process of its own (pg-driver-baseline.ts).
 * - Memory: the server's peak RSS growth over its first export, a fresh server each time.
 * - Small queries: a filtered 10-row query at 32 connections (autocannon) against a bare Bun.serve
 *   that runs the same query through the same driver and pool for each request (pg-bare-server.ts)
 *   and returns arrow402's body for it; runs alternating. Nothing is cached for PostgreSQL tables,
 *   so a repeated text is read from PostgreSQL every time, by both.
 */
import { tableFromIPC } from "apache-arrow";
import { SQL } from "bun";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { postgresBinDir, startPostgres } from "../tests/support/postgres.ts";
import { queryUrl, rawInit, readArrow, type ArrowRead } from "./arrow-client.ts";
import { freshDir, startArrow402, writeConfig } from "./arrow402.ts";
import { firstQueryGrowth } from "./exports.ts";
import { spawnServer, track, type ChildServer } from "./processes.ts";
import { mb, ms, runsOf, type SectionResult } from "./report.ts";
import { CONNECTIONS, requestsPerSecond, type Run } from "./small-queries.ts";
import { median } from "./stats.ts";

export const PG_COLUMNS = "id, ts, address, amount";
export const PG_EXPORT_SQL = `SELECT ${PG_COLUMNS} FROM transfers`;
/** The pool both servers read through: arrow402's default `max_connections`. */
const MAX_CONNECTIONS = 8;
const RSS_SAMPLES = 3;
const SMALL_ROWS = 10;
/** Unmeasured seconds of the small query on each server before the measured runs. */
const SMALL_WARMUP_S = 5;
const EXPORT_TARGET = 1.3;
const RSS_TARGET_MB = 64;
const SMALL_TARGET = 0.7;

/**
 * `transfers` (id bigint primary key, ts timestamptz, address text of 42 characters, amount double
 * precision with 10% NULLs) generated in the server: the same rows from the same seed every time.
 * Frozen and analysed, so no read sets hint bits or plans from guesses.
 */
export async function loadPgTransfers(url: string, rowCount: number): Promise<void> {
  const admin = new SQL({ url, max: 1 });
  try {
    await admin.unsafe(`
      CREATE TABLE transfers (id bigint PRIMARY KEY, ts timestamptz NOT NULL, address text NOT NULL, amount double precision);
      SELECT setseed(0.402);
      INSERT INTO transfers
        SELECT g,
               timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second' + (random() * 1e6)::int8 * interval '1 microsecond',
               '0x' || md5(g::text) || left(md5((-g)::text), 8),
               CASE WHEN random() < 0.1 THEN NULL ELSE random() * 1e6 END
        FROM generate_series(1, ${rowCount}) AS g;
    `);
    await admin.unsafe("VACUUM (FREEZE, ANALYZE) transfers");
    const [row] = (await admin.unsafe("SELECT count(*)::int AS n, count(*) FILTER (WHERE length(address) <> 42)::int AS odd FROM transfers")) as { n: number; odd: number }[];
    if (row!.n !== rowCount || row!.odd !== 0) throw new Error(`the PostgreSQL benchmark table has ${row!.n} rows (${row!.odd} addresses not of 42 characters), expected ${rowCount}`);
  } finally {
    await admin.close();
  }
}

/** PostgreSQL sending the rows to psql, which writes them to /dev/null: the statement's time by psql's `\timing`. */
function psqlCopyMs(url: string, select: string): number {
  const psql = join(postgresBinDir(), "psql");
  const run = Bun.spawnSync(
    [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", "\\timing on", "-c", "\\o /dev/null", "-c", `COPY (${select}) TO STDOUT (FORMAT binary)`],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  const out = run.stdout.toString();
  const time = /Time: ([\d.]+) ms/.exec(out)?.[1];
  if (run.exitCode !== 0 || time === undefined) throw new Error(`psql COPY failed (exit ${run.exitCode}): ${run.stderr.toString().trim() || out.trim()}`);
  return Number(time);
}

interface DriverRead {
  valuesMs: number;
  rows: number;
  copyMs: number;
  copyBytes: number;
}

/** Bun.SQL in a fresh process: `.values()` of the select, and the COPY drained (pg-driver-baseline.ts). */
async function driverRead(url: string, select: string, rowCount: number): Promise<DriverRead> {
  const child = track(Bun.spawn(["bun", join(import.meta.dir, "pg-driver-baseline.ts"), url, select], { stdin: "ignore", stdout: "pipe", stderr: "inherit" }));
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`the Bun.SQL baseline failed (exit ${child.exitCode}): ${output}`);
  const read = JSON.parse(output) as DriverRead;
  if (read.rows !== rowCount) throw new Error(`Bun.SQL read ${read.rows} rows of ${select}, expected ${rowCount}`);
  return read;
}

export async function measurePostgres(rowCount: number, runs: number): Promise<SectionResult> {
  // A server for the benchmark: larger shared buffers than the tests' 16 MB, so the table is read
  // from PostgreSQL's cache as a production server would, by every side alike.
  const postgres = await startPostgres({ settings: { shared_buffers: "256MB" } });
  const servers: ChildServer[] = [];
  try {
    const url = await postgres.createDatabase("arrow402_bench");
    await loadPgTransfers(url, rowCount);
    const dir = freshDir("postgres");
    const configPath = writeConfig(dir, {
      databases: { warehouse: { postgres: url, max_connections: MAX_CONNECTIONS } },
      ledger: { path: join(dir, "ledger.sqlite") },
      limits: { max_rows: Math.max(rowCount, 1_000_000) },
      tables: [{ name: "transfers", database: "warehouse" }],
    });
    const start = () => startArrow402(configPath);
    const server = await start();
    servers.push(server);
    const exported = await measureExport(server, start, url, rowCount, runs);
    const small = await measureSmall(server, url, dir, rowCount, Math.min(runs, 3));
    return { checks: [...exported.checks, ...small.checks], details: [...exported.details, ...small.details] };
  } finally {
    for (const server of servers) await server.stop();
    await postgres.stop();
  }
}

async function measureExport(server: ChildServer, start: () => Promise<ChildServer>, url: string, rowCount: number, runs: number): Promise<SectionResult> {
  const exportUrl = queryUrl(server.url, PG_EXPORT_SQL);
  // Unmeasured: warms arrow402 (JIT, pool), PostgreSQL's buffers and psql's page cache.
  await readArrow(exportUrl, { expectedRows: rowCount });
  psqlCopyMs(url, PG_EXPORT_SQL);
  const copies: number[] = [];
  const reads: ArrowRead[] = [];
  const drivers: DriverRead[] = [];
  for (let run = 0; run < runs; run++) {
    copies.push(psqlCopyMs(url, PG_EXPORT_SQL));
    Bun.gc(true);
    reads.push(await readArrow(exportUrl, { expectedRows: rowCount }));
  }
  for (let run = 0; run < Math.min(runs, 3); run++) drivers.push(await driverRead(url, PG_EXPORT_SQL, rowCount));
  const growth: number[] = [];
  for (let run = 0; run < RSS_SAMPLES; run++) growth.push((await firstQueryGrowth(start, PG_EXPORT_SQL, rowCount)).growth);

  const copy = median(copies);
  const total = median(reads.map((r) => r.totalMs));
  const rss = median(growth);
  const payload = reads[0]!.bytes;
  const name = `PostgreSQL transfers`;
  return {
    checks: [
      {
        item: "7",
        figure: `${name}: free ${rowCount}-row export, read + decoded`,
        measured: ms(total),
        baseline: `psql COPY binary → /dev/null ${ms(copy)}`,
        ratio: total / copy,
        target: `≤ ${EXPORT_TARGET.toFixed(2)}×`,
        pass: total / copy <= EXPORT_TARGET,
      },
      {
        item: "7",
        figure: `${name}: server peak RSS growth (first ${rowCount}-row export of a fresh server)`,
        measured: mb(rss),
        baseline: `Arrow payload ${mb(payload)}`,
        ratio: null,
        target: `≤ ${RSS_TARGET_MB} MB`,
        pass: rss <= RSS_TARGET_MB * 1e6,
      },
    ],
    details: [
      { item: "7", name: `${name}: query`, value: `\`${PG_EXPORT_SQL}\` (id bigint, ts timestamptz, address text of 42 characters, amount double precision with 10% NULLs)` },
      { item: "7", name: `${name}: psql \`COPY (…) TO STDOUT (FORMAT binary)\` → /dev/null runs (psql \\timing)`, value: runsOf(copies, ms) },
      { item: "7", name: `${name}: end-to-end runs (request → decoded table)`, value: runsOf(reads.map((r) => r.totalMs), ms) },
      { item: "7", name: `${name}: time to first byte runs`, value: runsOf(reads.map((r) => r.firstByteMs), ms) },
      { item: "7", name: `${name}: end-to-end throughput (median)`, value: `${((rowCount / total) * 1000 / 1e6).toFixed(2)} M rows/s, ${((payload / total) * 1000 / 1e6).toFixed(0)} MB/s; Arrow payload ${payload} bytes in ${median(reads.map((r) => r.chunks))} chunks` },
      {
        item: "7",
        name: `${name}: Bun.SQL in process (fresh process each): \`.values()\` / COPY binary drained through \`readable()\``,
        value: `${ms(median(drivers.map((d) => d.valuesMs)))} / ${ms(median(drivers.map((d) => d.copyMs)))} (runs ${runsOf(drivers.map((d) => d.valuesMs), ms)} / ${runsOf(drivers.map((d) => d.copyMs), ms)}); COPY stream ${drivers[0]!.copyBytes} bytes`,
      },
      { item: "7", name: `${name}: server peak RSS growth runs (fresh server each)`, value: runsOf(growth, mb) },
    ],
  };
}

async function measureSmall(server: ChildServer, url: string, dir: string, rowCount: number, runs: number): Promise<SectionResult> {
  // Ten rows by primary key from the middle of the table.
  const from = Math.floor(rowCount / 2);
  const sql = `SELECT ${PG_COLUMNS} FROM transfers WHERE id > ${from} AND id <= ${from + SMALL_ROWS}`;
  const response = await fetch(queryUrl(server.url, sql), rawInit("identity"));
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`${sql}: expected 200, got ${response.status} ${new TextDecoder().decode(body.subarray(0, 300))}`);
  const rows = tableFromIPC(body).numRows;
  if (rows !== SMALL_ROWS) throw new Error(`${sql}: arrow402 returned ${rows} rows, expected ${SMALL_ROWS}`);
  const file = join(dir, "pg-small-query.arrow");
  writeFileSync(file, body);
  const bare = await spawnServer(["bun", join(import.meta.dir, "pg-bare-server.ts"), url, String(MAX_CONNECTIONS), String(SMALL_ROWS), file, sql], /bare PostgreSQL server on (http:\/\/\S+)/);
  try {
    const ourUrl = queryUrl(server.url, sql);
    const expected = Buffer.from(body).toString();
    // Both warmed for the same SMALL_WARMUP_S: arrow402 has far more code for the JIT to compile
    // than the bare server, and 1 s on 2 shared cores left its rate still rising run after run.
    await requestsPerSecond(ourUrl, expected, SMALL_WARMUP_S);
    await requestsPerSecond(bare.url, expected, SMALL_WARMUP_S);
    const ours: Run[] = [];
    const baseline: Run[] = [];
    for (let run = 0; run < runs; run++) {
      baseline.push(await requestsPerSecond(bare.url, expected));
      ours.push(await requestsPerSecond(ourUrl, expected));
    }
    const rps = median(ours.map((r) => r.rps));
    const bareRps = median(baseline.map((r) => r.rps));
    const fmt = (v: number) => `${v.toFixed(0)} req/s`;
    return {
      checks: [
        {
          item: "7",
          figure: `PostgreSQL filtered ${SMALL_ROWS}-row query, ${CONNECTIONS} connections`,
          measured: fmt(rps),
          baseline: `bare Bun.serve + Bun.SQL ${fmt(bareRps)}`,
          ratio: rps / bareRps,
          target: `≥ ${SMALL_TARGET.toFixed(2)}×`,
          pass: rps / bareRps >= SMALL_TARGET,
        },
      ],
      details: [
        {
          item: "7",
          name: `PostgreSQL filtered query: \`${sql}\``,
          value: `arrow402 ${runsOf(ours.map((r) => r.rps), fmt)}; bare ${runsOf(baseline.map((r) => r.rps), fmt)}; p99 ${median(ours.map((r) => r.p99))} / ${median(baseline.map((r) => r.p99))} ms; ${body.byteLength} bytes, ${SMALL_ROWS} rows; pool of ${MAX_CONNECTIONS} connections each`,
        },
      ],
    };
  } finally {
    await bare.stop();
  }
}

