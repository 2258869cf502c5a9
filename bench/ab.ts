/**
 * An A/B of two checkouts of arrow402 in one run: the same benchmark against a server started from
 * each checkout's src/, alternately (A, B, then B, A, …), so that a shared, noisy machine weighs on
 * both sides alike. Prints, per figure, the median of each side, the ratio B/A, the median of each
 * round's B/A with the rounds B did worse in (a round's two runs are taken back to back, so they
 * share the machine's load) and every run, and writes them as JSON to bench/out/ab-<time>.json.
 *
 *   bun bench/ab.ts --a DIR --b DIR [--only exports,memory,responsiveness,small,fresh,paid] [--rows 1000000] [--runs 5] [--engine sqlite|duckdb]
 *
 * `exports`: item 2's exports read end to end and decoded (with the in-process scan, one per run,
 * for the ratio item 2 reports); `memory`: peak RSS growth of a fresh server's first export;
 * `responsiveness`: GET /api/ p99 during four exports; `small`: item 1's small queries, one text
 * repeated; `fresh`: the same with a new text on every request; `paid`: item 3's fixed-price paid
 * query latency. The dataset is this checkout's (bench/dataset.ts). `--engine duckdb` serves its
 * `transfers` as item 8's Parquet file through a DuckDB source instead (exports, memory and
 * responsiveness of `transfers` only).
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { queryUrl, rawInit, readArrow } from "./arrow-client.ts";
import { freshDir, startArrow402, writeConfig } from "./arrow402.ts";
import { BENCH_OUT, ensureDataset, FILTERED_TABLE_SQL, filteredRows, MIXED_TABLE_SQL, TABLE_SQL, WIDE_TABLE_SQL } from "./dataset.ts";
import { startDevnetProcess } from "./devnet.ts";
import { bareScanMs, firstQueryGrowth } from "./exports.ts";
import { ensureTransfersParquet } from "./lake.ts";
import { loadAverage } from "./machine.ts";
import { FIXED_SQL } from "./payments.ts";
import { createPayer } from "./payer.ts";
import type { ChildServer } from "./processes.ts";
import { markdownTable, textTable } from "./report.ts";
import { underLoad } from "./responsiveness.ts";
import { freshText, requestsPerSecond, smallQueries } from "./small-queries.ts";
import { median, percentile } from "./stats.ts";

const ITEMS = ["exports", "memory", "responsiveness", "small", "fresh", "paid"] as const;
type Item = (typeof ITEMS)[number];

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    a: { type: "string" },
    b: { type: "string" },
    only: { type: "string", default: "exports,memory,responsiveness" },
    rows: { type: "string", default: "1000000" },
    runs: { type: "string", default: "5" },
    tables: { type: "string" },
    engine: { type: "string", default: "sqlite" },
  },
});
if (values.engine !== "sqlite" && values.engine !== "duckdb") throw new Error(`--engine takes sqlite or duckdb; got '${values.engine}'`);
const duckdb = values.engine === "duckdb";
if (duckdb && values.only.split(",").some((item) => !["exports", "memory", "responsiveness"].includes(item.trim()))) {
  throw new Error("--engine duckdb takes --only exports, memory and responsiveness");
}
if (values.a === undefined || values.b === undefined) throw new Error("usage: bun bench/ab.ts --a DIR --b DIR [--only ...] [--rows N] [--runs N]");
const roots = { A: resolve(values.a), B: resolve(values.b) } as const;
const rowCount = Number(values.rows);
const runs = Number(values.runs);
const only = new Set(
  values.only.split(",").map((key) => {
    const item = ITEMS.find((name) => name === key.trim());
    if (item === undefined) throw new Error(`--only takes ${ITEMS.join(", ")}; got '${key}'`);
    return item as Item;
  }),
);

/**
 * A loaded machine can take longer than the default 10 s time limit over a 1M-row export read by
 * one worker: what is compared is the time, so neither side is cut short.
 */
const LIMITS = { query_timeout_ms: 300_000 };

type Side = "A" | "B";
interface Figure {
  item: string;
  figure: string;
  /** Whether more is better (req/s) or less (ms, bytes). */
  higherIsBetter: boolean;
  unit: (v: number) => string;
  A: number[];
  B: number[];
  /** Context for the figure (e.g. the in-process scan's runs). */
  note?: string;
}
const figures: Figure[] = [];

const started = performance.now();
const loadAtStart = loadAverage();
const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

/** Runs `measure` for A and B alternately, `count` times each, switching which goes first every round. */
async function alternate(count: number, measure: (side: Side, round: number) => Promise<number>): Promise<Record<Side, number[]>> {
  const out: Record<Side, number[]> = { A: [], B: [] };
  for (let round = 0; round < count; round++) {
    for (const side of round % 2 === 0 ? (["A", "B"] as const) : (["B", "A"] as const)) out[side].push(await measure(side, round));
  }
  return out;
}

const msUnit = (v: number) => `${v.toFixed(v < 10 ? 2 : 0)} ms`;
const mbUnit = (v: number) => `${(v / 1e6).toFixed(1)} MB`;
const rpsUnit = (v: number) => `${v.toFixed(0)} req/s`;

log(`dataset: ${rowCount} rows; A = ${roots.A}, B = ${roots.B}; load ${loadAtStart}`);
const dbPath = ensureDataset(rowCount);

const exportTables = [
  { label: "transfers", sql: TABLE_SQL, rows: rowCount },
  { label: "wide_transfers", sql: WIDE_TABLE_SQL, rows: rowCount },
  { label: "mixed_transfers", sql: MIXED_TABLE_SQL, rows: rowCount },
  { label: "transfers, filtered", sql: FILTERED_TABLE_SQL, rows: filteredRows(dbPath) },
].filter((table) => (duckdb ? table.label === "transfers" : values.tables === undefined || values.tables.split(",").includes(table.label)));
const parquet = duckdb ? await ensureTransfersParquet(dbPath, rowCount) : null;

if (only.has("exports") || only.has("memory") || only.has("responsiveness") || only.has("small") || only.has("fresh")) {
  const starters = Object.fromEntries(
    (["A", "B"] as const).map((side) => {
      const dir = freshDir(`ab-free-${side}`);
      const config =
        parquet === null
          ? {
              database: { sqlite: dbPath },
              ledger: { path: join(dir, "ledger.sqlite") },
              limits: LIMITS,
              tables: [{ name: "transfers" }, { name: "transfers_1k" }, { name: "wide_transfers" }, { name: "mixed_transfers" }],
            }
          : { databases: { lake: { duckdb: ":memory:" } }, ledger: { path: join(dir, "ledger.sqlite") }, limits: LIMITS, tables: [{ name: "transfers", files: parquet.glob }] };
      const path = writeConfig(dir, config);
      return [side, () => startArrow402(path, roots[side])];
    }),
  ) as Record<Side, () => Promise<ChildServer>>;
  const servers = { A: await starters.A(), B: await starters.B() } as Record<Side, ChildServer>;
  try {
    if (only.has("exports")) {
      for (const table of exportTables) {
        log(`exports: ${table.label}`);
        for (const side of ["A", "B"] as const) await readArrow(queryUrl(servers[side].url, table.sql), { expectedRows: table.rows });
        const scans: number[] = [];
        const times = await alternate(runs, async (side, round) => {
          if (!duckdb && side === (round % 2 === 0 ? "A" : "B")) scans.push(await bareScanMs(dbPath, table.sql, table.rows));
          Bun.gc(true);
          return (await readArrow(queryUrl(servers[side].url, table.sql), { expectedRows: table.rows })).totalMs;
        });
        const scan = duckdb ? 0 : median(scans);
        figures.push({
          item: "2",
          figure: `${table.label}: export read + decoded`,
          higherIsBetter: false,
          unit: msUnit,
          ...times,
          ...(duckdb ? {} : { note: `in-process scan ${msUnit(scan)}: A ${(median(times.A) / scan).toFixed(2)}×, B ${(median(times.B) / scan).toFixed(2)}× the scan` }),
        });
      }
    }
    if (only.has("memory")) {
      for (const table of exportTables) {
        log(`memory: ${table.label}`);
        let payload = 0;
        const growth = await alternate(runs, async (side) => {
          const { growth, bytes } = await firstQueryGrowth(starters[side], table.sql, table.rows);
          payload = bytes;
          return growth;
        });
        figures.push({
          item: "2",
          figure: `${table.label}: peak RSS growth, first export of a fresh server`,
          higherIsBetter: false,
          unit: mbUnit,
          ...growth,
          note: `Arrow payload ${mbUnit(payload)}: A ${(median(growth.A) / payload).toFixed(2)}×, B ${(median(growth.B) / payload).toFixed(2)}× the body`,
        });
      }
    }
    if (only.has("responsiveness")) {
      log("responsiveness: GET /api/ during 4 exports");
      const loads: Record<Side, number[]> = { A: [], B: [] };
      const p99 = await alternate(runs, async (side) => {
        const { latencies, loadMs } = await underLoad(servers[side], rowCount);
        loads[side].push(loadMs);
        return percentile(latencies, 99);
      });
      figures.push({ item: "2", figure: "GET /api/ p99 during 4 exports", higherIsBetter: false, unit: msUnit, ...p99 });
      figures.push({ item: "2", figure: "4 parallel exports complete in", higherIsBetter: false, unit: msUnit, ...loads });
    }
    for (const fresh of [false, true]) {
      if (!only.has(fresh ? "fresh" : "small")) continue;
      for (const query of smallQueries(rowCount)) {
        if (fresh && query.reference) continue;
        const label = `${query.kind}, ${query.table}${fresh ? ", new text each request" : ""}`;
        log(`small: ${label}`);
        const expected = Buffer.from(await (await fetch(queryUrl(servers.A.url, query.sql), rawInit("identity"))).arrayBuffer()).toString();
        const expectedB = Buffer.from(await (await fetch(queryUrl(servers.B.url, query.sql), rawInit("identity"))).arrayBuffer()).toString();
        if (expected !== expectedB) throw new Error(`${query.sql}: A and B answer different bytes`);
        const path = (n: number) => `/api/query?query=${encodeURIComponent(freshText(query.sql, n))}`;
        const once = (side: Side, seconds: number) =>
          fresh ? requestsPerSecond(servers[side].url, expected, seconds, path) : requestsPerSecond(queryUrl(servers[side].url, query.sql), expected, seconds);
        for (const side of ["A", "B"] as const) await once(side, 1);
        const rps = await alternate(runs, async (side) => (await once(side, 3)).rps);
        figures.push({ item: "1", figure: `${label}: req/s at 32 connections`, higherIsBetter: true, unit: rpsUnit, ...rps });
      }
    }
  } finally {
    await servers.A.stop();
    await servers.B.stop();
  }
}

if (only.has("paid")) {
  log("devnet: anvil, test token, x402 facilitator");
  const devnet = await startDevnetProcess();
  try {
    const servers = {} as Record<Side, ChildServer>;
    for (const side of ["A", "B"] as const) {
      const dir = freshDir(`ab-paid-${side}`);
      const config = {
        facilitator: { url: devnet.facilitatorUrl },
        database: { sqlite: dbPath },
        ledger: { path: join(dir, "ledger.sqlite") },
        limits: LIMITS,
        tokens: devnet.tokens(),
        tables: [{ name: "fixed_transfers", price_tags: [devnet.tag({ type: "fixed", amount: "0.01" })] }],
      };
      servers[side] = await startArrow402(writeConfig(dir, config), roots[side]);
    }
    try {
      const payer = createPayer(devnet.payerKey);
      log("paid: fixed-price LIMIT 10");
      for (let i = 0; i < 10; i++) for (const side of ["A", "B"] as const) await payer.pay(queryUrl(servers[side].url, FIXED_SQL));
      const paid = await alternate(Math.max(runs, 30), async (side) => (await payer.pay(queryUrl(servers[side].url, FIXED_SQL))).paidMs);
      figures.push({ item: "3", figure: `fixed-price paid query latency (\`${FIXED_SQL}\`)`, higherIsBetter: false, unit: msUnit, ...paid });
    } finally {
      await servers.A?.stop();
      await servers.B?.stop();
    }
  } finally {
    await devnet.stop();
  }
}

const loadAtEnd = loadAverage();
/** Half the spread of a side's runs around its median, as a share of it. */
const spread = (values: number[]) => (Math.max(...values) - Math.min(...values)) / 2 / median(values);
/** B/A of each round's two runs (taken back to back), and the rounds in which B did worse than A. */
const paired = (f: Figure) => {
  const ratios = f.A.map((a, i) => f.B[i]! / a);
  const worse = ratios.filter((r) => (f.higherIsBetter ? r < 1 : r > 1)).length;
  return `${median(ratios).toFixed(2)}×, B worse in ${worse}/${ratios.length}`;
};
const rows = [
  ["item", "figure", "A (median)", "B (median)", "B/A", "paired B/A", "spread A / B", "runs A; runs B"],
  ...figures.map((f) => [
    f.item,
    f.note === undefined ? f.figure : `${f.figure} (${f.note})`,
    f.unit(median(f.A)),
    f.unit(median(f.B)),
    `${(median(f.B) / median(f.A)).toFixed(2)}×`,
    paired(f),
    `±${(spread(f.A) * 100).toFixed(0)}% / ±${(spread(f.B) * 100).toFixed(0)}%`,
    `${f.A.map(f.unit).join(", ")}; ${f.B.map(f.unit).join(", ")}`,
  ]),
];
console.log(`\n${textTable(rows)}\n`);
console.log(markdownTable(rows));
const seconds = (performance.now() - started) / 1000;
log(`done in ${seconds.toFixed(0)} s; load average (1 min) at start / end: ${loadAtStart} / ${loadAtEnd}`);
const out = join(BENCH_OUT, `ab-${new Date().toISOString().replaceAll(":", "-").slice(0, 19)}.json`);
writeFileSync(out, JSON.stringify({ a: roots.A, b: roots.B, rows: rowCount, runs, loadAtStart, loadAtEnd, seconds, figures: figures.map(({ unit: _, ...f }) => f) }, null, 2));
log(`wrote ${out}`);
process.exit(0);
