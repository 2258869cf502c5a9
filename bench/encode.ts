/**
 * Arrow encoder cost against a bare bun:sqlite scan (DESIGN.md §5 performance goal: the whole
 * HTTP path within 1.5× a bare `db.query(sql).values()` of 1,000,000 rows × 6 columns).
 *
 *   bun bench/encode.ts [rows] [runs]
 *
 * Generates (once, in the system temp dir) a table of int, int, ISO timestamp text, address text,
 * nullable real, int; then prints medians, each also as a ratio of the bare scan, of:
 *   bare            `db.query(sql).values()` on a default connection (the reference)
 *   safeScan        the same with `safeIntegers: true` (what arrow402 uses: exact 64-bit integers)
 *   encode          the encoder alone on rows already read (65,536-row batches)
 *   scanAndEncode   safeScan + encode
 *   streamAndEncode `stmt.iterate()` into 65,536-row batches + encode, as the query worker does
 */
import { Database } from "bun:sqlite";
import { existsSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStreamEncoder, DEFAULT_BATCH_SIZE, type EncoderColumn } from "../src/arrow/encode.ts";

const rowCount = Number(process.argv[2] ?? 1_000_000);
const runs = Number(process.argv[3] ?? 5);
const path = join(tmpdir(), `arrow402-bench-encode-${rowCount}.sqlite`);
const sql = "SELECT id, block, ts, address, amount, nonce FROM transfers";
const columns: EncoderColumn[] = [
  { name: "id", kind: "int64", nullable: false },
  { name: "block", kind: "int64", nullable: false },
  { name: "ts", kind: "timestamp", nullable: false },
  { name: "address", kind: "utf8", nullable: false },
  { name: "amount", kind: "float64", nullable: true },
  { name: "nonce", kind: "int64", nullable: false },
];

function generate(): void {
  const db = new Database(`${path}.partial`, { create: true });
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
  db.close();
  renameSync(`${path}.partial`, path);
}

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
  const names = statement.columnNames;
  const encoder = createStreamEncoder(columns);
  let bytes = encoder.schemaMessage().byteLength;
  let batch: unknown[][] = [];
  let first = 0;
  for (const record of statement.iterate() as Iterable<Record<string, unknown>>) {
    batch.push(names.map((name) => record[name]));
    if (batch.length === DEFAULT_BATCH_SIZE) {
      bytes += encoder.batchMessage(batch, first).byteLength;
      first += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) bytes += encoder.batchMessage(batch, first).byteLength;
  statement.finalize();
  return bytes + encoder.endMessage().byteLength;
}

if (!existsSync(path)) {
  console.log(`generating ${rowCount} rows in ${path} …`);
  generate();
}
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
