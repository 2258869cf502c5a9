/**
 * `bun run bench`: measures every performance target against baselines taken in the same run and
 * writes BENCHMARKS.md. Servers under test run as separate processes; this process is the client.
 *
 *   bun bench/run.ts [--rows 1000000] [--runs 5] [--only small,exports,paid,unsettled,compression,replicas,postgres,duckdb] [--out FILE]
 *
 * Items (`--only` takes their keys or numbers): 1 small filtered queries, 2 exports (throughput,
 * first byte, memory, responsiveness), 3 paid queries, 4 payments that cannot settle, 5
 * compression, 6 replicas, 7 PostgreSQL tables, 8 Parquet tables through DuckDB. A failed check
 * throws: nothing is written from a run that failed.
 */
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freshDir, startArrow402, writeConfig } from "./arrow402.ts";
import { measureCompression } from "./compression.ts";
import { measureDuckdb } from "./duckdb.ts";
import { ensureDataset, FILTERED_TABLE_SQL, filteredRows, MIXED_TABLE_SQL, TABLE_SQL, WIDE_TABLE_SQL } from "./dataset.ts";
import { startDevnetProcess } from "./devnet.ts";
import { measureExport } from "./exports.ts";
import { describeMachine, loadAverage } from "./machine.ts";
import { measurePayments } from "./payments.ts";
import { measurePostgres } from "./postgres.ts";
import { measureReplicas } from "./replicas.ts";
import { checksTable, detailsTable, markdownTable, textTable, type SectionResult } from "./report.ts";
import { measureResponsiveness } from "./responsiveness.ts";
import { measureSmallQueries } from "./small-queries.ts";
import { measureUnsettled } from "./unsettled.ts";

const ITEMS = ["small", "exports", "paid", "unsettled", "compression", "replicas", "postgres", "duckdb"] as const;
type Item = (typeof ITEMS)[number];
/** Each item's number in BENCHMARKS.md. */
const NUMBERS: Record<Item, number> = { small: 1, exports: 2, paid: 3, unsettled: 4, compression: 5, replicas: 6, postgres: 7, duckdb: 8 };

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rows: { type: "string", default: "1000000" },
    runs: { type: "string", default: "5" },
    only: { type: "string" },
    out: { type: "string", default: join(import.meta.dir, "..", "BENCHMARKS.md") },
  },
});
const rowCount = Number(values.rows);
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number of at least 1, got ${values.runs}`);
const only = new Set<Item>(
  (values.only ?? ITEMS.join(",")).split(",").map((key) => {
    const item = /^\d+$/.test(key) ? ITEMS.find((name) => NUMBERS[name] === Number(key)) : ITEMS.find((name) => name === key.trim());
    if (item === undefined) throw new Error(`--only takes ${ITEMS.map((name) => `${name} (${NUMBERS[name]})`).join(", ")}; got '${key}'`);
    return item;
  }),
);
// The command that reproduces the figures: the arguments, less where the report is written.
const args = Bun.argv.slice(2);
const command = ["bun run bench", ...args.filter((arg, i) => !arg.startsWith("--out") && args[i - 1] !== "--out")].join(" ");

const started = performance.now();
const loadAtStart = loadAverage();
const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

// Item 7 loads its own rows into PostgreSQL: the SQLite dataset is made only for the other items.
const needsDataset = [...only].some((item) => item !== "postgres");
if (needsDataset) log(`dataset: ${rowCount} rows (bench/dataset.ts)`);
const dbPath = needsDataset ? ensureDataset(rowCount) : "";
const results: SectionResult[] = [];

if (only.has("small") || only.has("exports") || only.has("compression")) {
  const dir = freshDir("free");
  const config = {
    database: { sqlite: dbPath },
    ledger: { path: join(dir, "ledger.sqlite") },
    tables: [{ name: "transfers" }, { name: "transfers_1k" }, { name: "wide_transfers" }, { name: "mixed_transfers" }],
  };
  const startServer = () => startArrow402(writeConfig(dir, config));
  const server = await startServer();
  try {
    if (only.has("small")) {
      log("item 1: small filtered queries (autocannon)");
      results.push(await measureSmallQueries(server, dbPath, rowCount, dir, Math.min(runs, 3)));
    }
    if (only.has("exports")) {
      for (const table of [
        { label: "transfers", sql: TABLE_SQL },
        { label: "wide_transfers", sql: WIDE_TABLE_SQL },
        // Another shape of text-heavy rows, listed beside the targets.
        { label: "mixed_transfers", sql: MIXED_TABLE_SQL, target: false, memory: true },
        // What a buyer filtering a bulk export sends: the same scan, 90% of the rows kept.
        { label: "transfers, filtered", sql: FILTERED_TABLE_SQL, rows: filteredRows(dbPath), target: false },
      ]) {
        log(`item 2: export of ${table.label}`);
        results.push(await measureExport(server, startServer, table, dbPath, rowCount, runs));
      }
      log("item 2: GET /api/ during exports");
      results.push(await measureResponsiveness(server, rowCount, Math.min(runs, 3)));
    }
    if (only.has("compression")) {
      log("item 5: compression");
      results.push(await measureCompression(server, TABLE_SQL, rowCount, Math.min(runs, 3)));
    }
  } finally {
    await server.stop();
  }
}

if (only.has("paid") || only.has("unsettled") || only.has("replicas")) {
  log("devnet: anvil, test token, x402 facilitator");
  const devnet = await startDevnetProcess();
  try {
    if (only.has("paid") || only.has("unsettled")) {
      const dir = freshDir("paid");
      const config = {
        // Item 3 reads arrow402_spilled_bytes_total.
        server: { metrics: true },
        facilitator: { url: devnet.facilitatorUrl },
        database: { sqlite: dbPath },
        ledger: { path: join(dir, "ledger.sqlite") },
        // Item 4 sends hundreds of refused payments from one address: the per-client budget of
        // refusals (on by default) would answer them 429 after the 10th.
        limits: { max_refused_payments_per_minute: 0 },
        tokens: devnet.tokens(),
        tables: [
          { name: "fixed_transfers", price_tags: [devnet.tag({ type: "fixed", amount: "0.01" })] },
          { name: "per_row_transfers", price_tags: [devnet.tag({ type: "per_row", amount_per_item: "0.000001" })] },
        ],
      };
      const server = await startArrow402(writeConfig(dir, config));
      try {
        if (only.has("paid")) {
          log("item 3: paid queries");
          results.push(await measurePayments(devnet, server, dbPath, dir, Math.max(runs, 9), Math.min(runs, 3)));
        }
        if (only.has("unsettled")) {
          log("item 4: payments that cannot settle");
          const db = new Database(dbPath, { readonly: true });
          const { rows } = db.query("SELECT count(*) AS rows FROM transfers WHERE amount >= 0").get() as { rows: number };
          db.close();
          results.push(await measureUnsettled(devnet, server, rows));
        }
      } finally {
        await server.stop();
      }
    }
    if (only.has("replicas")) {
      log("item 6: replicas (PostgreSQL)");
      results.push(await measureReplicas(devnet, dbPath, Math.min(runs, 3)));
    }
  } finally {
    await devnet.stop();
  }
}

if (only.has("postgres")) {
  log("item 7: PostgreSQL tables");
  results.push(await measurePostgres(rowCount, runs));
}
if (only.has("duckdb")) results.push(await measureDuckdb(dbPath, rowCount, runs, log));

const checks = results.flatMap((r) => r.checks).sort((a, b) => a.item.localeCompare(b.item));
const details = results.flatMap((r) => r.details).sort((a, b) => a.item.localeCompare(b.item));
const tables = results.flatMap((r) => r.tables ?? []);
const seconds = (performance.now() - started) / 1000;
const loadAtEnd = loadAverage();
console.log(`\n${textTable(checksTable(checks))}\n`);
for (const table of tables) console.log(`${table.title}\n${textTable(table.rows)}\n`);
console.log(`${textTable(detailsTable(details))}\n`);
const misses = checks.filter((c) => !c.pass);
log(`done in ${seconds.toFixed(0)} s; ${checks.length - misses.length} of ${checks.length} targets met${misses.length > 0 ? `, missed: ${misses.map((c) => `${c.item} ${c.figure}`).join("; ")}` : ""}`);

const notes = readFileSync(join(import.meta.dir, "notes.md"), "utf8").trim();
const markdown = `# Benchmarks

Generated by \`${command}\` on ${new Date().toISOString().slice(0, 10)} (${seconds.toFixed(0)} s). Every figure is the
median of the runs listed under "All figures"; every baseline was measured in the same run. A target
not met is marked "miss".

## Machine

${describeMachine().map((line) => `- ${line}`).join("\n")}
- Load average (1 min) at start / end: ${loadAtStart} / ${loadAtEnd}

## Targets

${markdownTable(checksTable(checks))}
${tables.map((table) => `\n### ${table.title}\n\n${markdownTable(table.rows)}\n`).join("")}
## All figures

${markdownTable(detailsTable(details))}

${notes}
`;
writeFileSync(values.out, markdown);
log(`wrote ${values.out}`);
process.exit(0);
