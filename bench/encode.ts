/**
 * Arrow encoder cost against a bare bun:sqlite scan (ARCHITECTURE.md §5 performance goal: the whole
 * HTTP path within 1.5× a bare `db.query(sql).values()` of 1,000,000 rows × 6 columns).
 *
 *   bun bench/encode.ts [rows] [runs]
 *
 * Generates (once, in bench/out/, see dataset.ts) a table of int, int, ISO timestamp text, address text,
 * nullable real, int; then prints medians, each also as a ratio of the bare scan, of:
 *   bare            `db.query(sql).values()` on a default connection (the reference)
 *   safeScan        the same with `safeIntegers: true` (what arrow402 uses: exact 64-bit integers)
 *   encode          the encoder alone on rows already read (65,536-row batches)
 *   scanAndEncode   safeScan + encode
 *   streamAndEncode `stmt.iterate()` row objects in 16,384-row batches + encode, as the query worker does
 */
import { Database } from "bun:sqlite";
import { createStreamEncoder, DEFAULT_BATCH_SIZE, type Row } from "../src/arrow/encode.ts";
import { BATCH_ROWS } from "../src/engines/sqlite/protocol.ts";
import { ensureDataset, TABLE_SQL as sql, TRANSFER_COLUMNS as columns } from "./dataset.ts";

const rowCount = Number(process.argv[2] ?? 1_000_000);
const runs = Number(process.argv[3] ?? 5);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(action: () => void): number {
  Bun.gc(true);
  const start = performance.now();
  action();
  return performance.now() - start;
}

function encodeAll(rows: unknown[][]): number {
  const encoder = createStreamEncoder(columns);
  let bytes = encoder.schemaMessage().byteLength;
  for (let first = 0; first < rows.length; first += DEFAULT_BATCH_SIZE) {
    bytes += encoder.batchMessage(rows.slice(first, first + DEFAULT_BATCH_SIZE), first).byteLength;
  }
  return bytes + encoder.endMessage().byteLength;
}

/** Rows streamed with iterate() and encoded batch by batch, never holding the whole result. */
function streamAndEncode(): number {
  const statement = safe.prepare(sql);
  const encoder = createStreamEncoder(columns, { rowKeys: statement.columnNames });
  let bytes = encoder.schemaMessage().byteLength;
  let batch: Row[] = [];
  let first = 0;
  for (const record of statement.iterate() as Iterable<Row>) {
    batch.push(record);
    if (batch.length === BATCH_ROWS) {
      bytes += encoder.batchMessage(batch, first).byteLength;
      first += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) bytes += encoder.batchMessage(batch, first).byteLength;
  statement.finalize();
  return bytes + encoder.endMessage().byteLength;
}

const path = ensureDataset(rowCount);
const bare = new Database(path, { readonly: true });
const safe = new Database(path, { readonly: true, safeIntegers: true });
const samples = { bare: [] as number[], safeScan: [] as number[], encode: [] as number[], scanAndEncode: [] as number[], streamAndEncode: [] as number[] };
let streamBytes = 0;
for (let run = 0; run < runs; run++) {
  samples.bare.push(time(() => bare.query(sql).values()));
  let rows: unknown[][] = [];
  samples.safeScan.push(time(() => (rows = safe.query(sql).values())));
  samples.encode.push(time(() => (streamBytes = encodeAll(rows))));
  rows = [];
  samples.scanAndEncode.push(time(() => (streamBytes = encodeAll(safe.query(sql).values()))));
  samples.streamAndEncode.push(time(() => (streamBytes = streamAndEncode())));
}
const base = median(samples.bare);
console.log(`${rowCount} rows × ${columns.length} columns, ${runs} runs, stream ${(streamBytes / 1e6).toFixed(1)} MB`);
for (const [name, values] of Object.entries(samples)) {
  const m = median(values);
  console.log(`${name.padEnd(14)} ${m.toFixed(0).padStart(6)} ms  ${(m / base).toFixed(2)}× bare scan`);
}
