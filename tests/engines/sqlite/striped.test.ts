/**
 * Scans of a whole table, filtered or not, read by two workers range by range (engines/sqlite/striped.ts)
 * return exactly what one SQLite scan returns, rows and order; the queries that must not be split
 * are not; failures, limits and a client going away behave as on one worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC, type Table } from "apache-arrow";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../../src/config/load.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import type { QueryResult } from "../../../src/results/executor.ts";
import { SqliteExecutor } from "./executor.ts";
import { BATCH_MAX_BYTES, MAX_IN_FLIGHT } from "../../../src/engines/sqlite/protocol.ts";
import { RANGE_ROWIDS } from "../../../src/engines/sqlite/stripe-plan.ts";
import { formatNamed } from "../../../src/formats/registry.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";
import { sqliteValues } from "../../support/sqlite-direct.ts";

const MAX_ROWS = 500_000;
/** A time limit, and a test's time, that no test here needs on a loaded machine unless it is stuck. */
const SLOW_MACHINE_MS = 120_000;
let path: string;
let walPath: string;
let catalog: Catalog;
let walCatalog: Catalog;
let two: SqliteExecutor;
let one: SqliteExecutor;
let wal: SqliteExecutor;
let limits: ReturnType<typeof resolveConfig>["limits"];

const TABLES = ["dense", "sparse", "covered", "misfit", "empty", "wide_span", "top", "ambiguous", "gappy", "epochs", "clustered"];
/**
 * `clustered`: 40,000 rows of a few bytes, but two runs of 1,200 rows of 20 KB (24 MB, five parts
 * and a last batch each) between the rows whose width the split samples (every 2,500 rowids):
 * split. One run is in range 0, which the first worker reads; the other in range 2, the helper's
 * first, which it reads while range 0 is still being sent.
 */
const CLUSTERED_ROWS = 40_000;
const CLUSTER_WIDTH = 20_000;
const inCluster = (id: number) => (id >= 501 && id <= 1_700) || (id >= 2 * RANGE_ROWIDS + 9 && id <= 2 * RANGE_ROWIDS + 1_208);

beforeAll(async () => {
  const dir = tempDir();
  path = join(dir, "striped.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE dense (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, t TEXT, r REAL)");
  db.run("CREATE TABLE sparse (k INTEGER, label TEXT)"); // rowid only, not a column
  db.run("CREATE TABLE covered (id INTEGER PRIMARY KEY, a TEXT, b TEXT)");
  db.run("CREATE INDEX covered_a ON covered (a)");
  db.run("CREATE TABLE misfit (id INTEGER PRIMARY KEY, n INTEGER)");
  db.run("CREATE TABLE empty (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE wide_span (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE top (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE ambiguous (id INTEGER PRIMARY KEY, i INTEGER, r REAL)");
  db.run("CREATE TABLE gappy (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE epochs (id INTEGER PRIMARY KEY, at TIMESTAMP NOT NULL)");
  db.run("CREATE TABLE clustered (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, body TEXT NOT NULL)");
  db.transaction(() => {
    const dense = db.prepare("INSERT INTO dense VALUES (?, ?, ?, ?)");
    for (let i = 1; i <= 100_000; i++) dense.run(i, i * 7919 - 2 ** 40, i % 13 === 0 ? null : `row ${i} ✓`, i % 5 === 0 ? null : i / 3);
    // Negative and spread rowids: ranges hold few rows each.
    const sparse = db.prepare("INSERT INTO sparse (rowid, k, label) VALUES (?, ?, ?)");
    for (let i = 0; i < 30_000; i++) sparse.run(-45_000 + 3 * i, i, `s${i}`);
    const covered = db.prepare("INSERT INTO covered VALUES (?, ?, ?)");
    for (let i = 1; i <= 20_000; i++) covered.run(i, `a${(i * 7) % 1000}`, `b${i}`);
    const misfit = db.prepare("INSERT INTO misfit VALUES (?, ?)");
    for (let i = 1; i <= 30_000; i++) misfit.run(i, i === 17_777 ? "seventeen" : i);
    // The largest rowids SQLite allows: the last range ends at 2^63 − 1, not past it.
    const top = db.prepare("INSERT INTO top VALUES (?, ?)");
    for (let i = 0n; i < 10_000n; i++) top.run(2n ** 63n - 1n - i, `t${i}`);
    // Integers a read without safeIntegers cannot tell exactly (2^53 + 1 reads as 2^53), in two
    // ranges of 4,096 rowids; a REAL of 1e20 in a third, which a REAL column reads exactly either way.
    const ambiguous = db.prepare("INSERT INTO ambiguous VALUES (?, ?, ?)");
    const special: Record<number, [bigint | number, number]> = { 5000: [2n ** 53n + 1n, 0.5], 9000: [7, 1e20], 15000: [-(2n ** 62n) - 3n, 2] };
    for (let i = 1; i <= 20_000; i++) ambiguous.run(i, ...(special[i] ?? [i * 3, i / 7]));
    // Unix seconds in a TIMESTAMP column: every range holds numbers only an exact read can tell.
    const epochs = db.prepare("INSERT INTO epochs VALUES (?, ?)");
    for (let i = 1; i <= 40_000; i++) epochs.run(i, 1_700_000_000 + i * 60);
    // Two runs of rows with 45,000 rowids between them: the ranges in the gap hold no row.
    const gappy = db.prepare("INSERT INTO gappy VALUES (?, ?)");
    for (let i = 1; i <= 5_000; i++) gappy.run(i, `g${i}`);
    for (let i = 50_001; i <= 55_000; i++) gappy.run(i, `g${i}`);
    // Ten rows over a span larger than max_rows: only a count can prove the limit.
    for (let i = 0; i < 10; i++) db.run("INSERT INTO wide_span VALUES (?, ?)", [1 + i * 100_000, `w${i}`]);
    const clustered = db.prepare("INSERT INTO clustered VALUES (?, ?, ?)");
    for (let i = 1; i <= CLUSTERED_ROWS; i++) clustered.run(i, i * 31, inCluster(i) ? String.fromCharCode(97 + (i % 26)).repeat(CLUSTER_WIDTH) : `c${i}`);
  })();
  db.close();
  walPath = join(dir, "striped-wal.sqlite");
  copyFileSync(path, walPath);
  const walDb = new Database(walPath);
  walDb.run("PRAGMA journal_mode = WAL");
  walDb.close();

  const config = (file: string) =>
    resolveConfig(
      {
        database: { sqlite: file },
        ledger: { path: join(dir, "ledger.sqlite") },
        // The costly exports below take several seconds on two loaded cores: a time limit they
        // cannot reach there (the limit is tested with executors of their own).
        limits: { max_rows: MAX_ROWS, query_timeout_ms: SLOW_MACHINE_MS },
        tables: TABLES.map((name) => ({ name })),
      },
      { baseDir: dir, env: {} },
    );
  const read = (file: string) => {
    const reader = openReadOnly(file);
    const result = readCatalog(reader, config(file).tables).catalog;
    reader.close();
    return result;
  };
  catalog = read(path);
  walCatalog = read(walPath);
  limits = config(path).limits;
  two = new SqliteExecutor(path, limits, 2);
  one = new SqliteExecutor(path, limits, 1);
  wal = new SqliteExecutor(walPath, limits, 2);
  // Workers start in the background (~80 ms each, more on a loaded machine): one scan first, so
  // that a helper still starting does not leave the first test's scan to one worker.
  await decode(await two.stream(validated("SELECT * FROM dense")));
});

afterAll(() => {
  for (const executor of [two, one, wal]) executor.close();
});

const validated = (sql: string, from = catalog) => validateQuery(sql, from, { maxQueryBytes: 10_000 });

async function decode(result: QueryResult): Promise<Table> {
  const body = "complete" in result ? new Blob(result.complete as BlobPart[]) : result.body;
  return tableFromIPC(new Uint8Array(await new Response(body).arrayBuffer()));
}

/** The result as rows of plain values, in order, to compare with bun:sqlite's own. */
function rowsOf(table: Table): unknown[][] {
  return table.toArray().map((row) => Object.values(row.toJSON()));
}

async function splitCount(executor: SqliteExecutor, run: () => Promise<unknown>): Promise<number> {
  const before = executor.engine.stats.splitScans;
  await run();
  return executor.engine.stats.splitScans - before;
}

describe("a whole-table scan on two workers", () => {
  test.each([
    ["SELECT * FROM dense", 100_000],
    ["SELECT t, id, r FROM dense", 100_000],
    ["SELECT label, k FROM sparse", 30_000],
  ])("%s: the rows and order of one SQLite scan", async (sql, rows) => {
    let table!: Table;
    expect(await splitCount(two, async () => (table = await decode(await two.stream(validated(sql)))))).toBe(1);
    expect(table.numRows).toBe(rows);
    expect(rowsOf(table)).toEqual(sqliteValues(path, sql, { safeIntegers: true }));
    // Record batches hold at most one range each.
    expect(Math.max(...table.batches.map((b) => b.numRows))).toBeLessThanOrEqual(RANGE_ROWIDS);
  });

  test.each([
    "SELECT * FROM dense WHERE n % 3 = 0 OR t IS NULL",
    // Few rows in a few ranges: most ranges send nothing.
    "SELECT id, t FROM dense WHERE id % 9973 = 1 OR r > 33330",
    "SELECT label FROM sparse WHERE k >= 100 AND label LIKE 's1%'",
    // Not one row: the stream still holds the schema.
    "SELECT * FROM dense WHERE n < -2e12",
  ])("filtered, %s: the rows and order of one SQLite scan", async (sql) => {
    // Read by ranges whether or not the second worker joins before the first has read them all.
    expect(rowsOf(await decode(await two.stream(validated(sql))))).toEqual(sqliteValues(path, sql, { safeIntegers: true }));
  });

  test("a filtered scan of a large table is read by two workers", async () => {
    const sql = "SELECT * FROM dense WHERE n % 3 = 0 OR t IS NULL";
    let table!: Table;
    expect(await splitCount(two, async () => (table = await decode(await two.stream(validated(sql)))))).toBe(1);
    expect(rowsOf(table)).toEqual(sqliteValues(path, sql, { safeIntegers: true }));
  });

  test("the filtered queries above select what they say", () => {
    expect(sqliteValues(path, "SELECT count(*) FROM dense WHERE n % 3 = 0 OR t IS NULL", { safeIntegers: true })).toEqual([[38_461n]]);
    // ids 1, 9974, …, 99731 and the eight rows from 99991 with an r.
    expect(sqliteValues(path, "SELECT count(*) FROM dense WHERE id % 9973 = 1 OR r > 33330", { safeIntegers: true })).toEqual([[19n]]);
    expect(sqliteValues(path, "SELECT count(*) FROM sparse WHERE k >= 100 AND label LIKE 's1%'", { safeIntegers: true })).toEqual([[11_100n]]);
    expect(sqliteValues(path, "SELECT count(*) FROM dense WHERE n < -2e12", { safeIntegers: true })).toEqual([[0n]]);
    expect(sqliteValues(path, "SELECT count(*) FROM covered WHERE b = 'b77'", { safeIntegers: true })).toEqual([[1n]]);
  });

  test("ranges that hold no row (a gap in the rowids) send nothing, and the stream goes on", async () => {
    // Eleven ranges in a row are empty. One worker or two (a second may join after the first has
    // read them all), a response that met them used to stall.
    const table = await decode(await two.stream(validated("SELECT * FROM gappy")));
    expect(table.numRows).toBe(10_000);
    expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT * FROM gappy", { safeIntegers: true }));
  });

  test("a table ending at the largest rowid (2^63 − 1) is read without a range bound past it", async () => {
    // Three ranges: the first worker may read them all before a second one joins, so only the
    // result is asserted here (the bound is computed the same way with one worker or two).
    const table = await decode(await two.stream(validated("SELECT * FROM top")));
    expect(table.numRows).toBe(10_000);
    expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT * FROM top", { safeIntegers: true }));
  });

  test("a buffered (paid) read gets the same rows and their count", async () => {
    const result = (await two.collect(validated("SELECT * FROM dense")))!;
    expect(result.rows).toBe(100_000);
    const body = "complete" in result.result ? new Blob(result.result.complete as BlobPart[]) : new Response(result.result.body);
    expect(rowsOf(tableFromIPC(new Uint8Array(await body.arrayBuffer())))).toEqual(
      sqliteValues(path, "SELECT * FROM dense", { safeIntegers: true }),
    );
  });

  test("a buffered read over a transport's byte cap stops there (null), and its workers serve the next query", async () => {
    expect(await two.collect(validated("SELECT * FROM dense"), formatNamed("arrow")!, 200_000)).toBeNull();
    const next = (await two.collect(validated("SELECT * FROM dense"), formatNamed("arrow")!, 100_000_000))!;
    expect(next.rows).toBe(100_000);
    expect(next.bytes).toBeGreaterThan(200_000);
  });

  test("ranges are read without safeIntegers, and again with it where a number could be inexact", async () => {
    const exactReads = async (sql: string) => {
      const before = two.engine.stats.exactRangeReads;
      const table = await decode(await two.stream(validated(sql)));
      expect(rowsOf(table)).toEqual(sqliteValues(path, sql, { safeIntegers: true }));
      return two.engine.stats.exactRangeReads - before;
    };
    expect(await exactReads("SELECT * FROM dense")).toBe(0);
    // Two ranges hold such numbers; each worker reads its ranges after its first one exactly at once.
    const ambiguous = await exactReads("SELECT * FROM ambiguous");
    expect(ambiguous).toBeGreaterThanOrEqual(1);
    expect(ambiguous).toBeLessThanOrEqual(2);
    expect(sqliteValues(path, "SELECT i FROM ambiguous WHERE id = 5000", { safeIntegers: true })).toEqual([[2n ** 53n + 1n]]);
  });

  test("Unix seconds in every range: each worker reads one range twice, its later ranges exactly at once", async () => {
    const ranges = Math.ceil(40_000 / RANGE_ROWIDS);
    expect(ranges).toBeGreaterThan(4);
    const before = two.engine.stats.exactRangeReads;
    const table = await decode(await two.stream(validated("SELECT * FROM epochs")));
    expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT id, at * 1000 FROM epochs", { safeIntegers: true }).map(([id, ms]) => [id, Number(ms)]));
    const rereads = two.engine.stats.exactRangeReads - before;
    expect(rereads).toBeGreaterThanOrEqual(1);
    expect(rereads).toBeLessThanOrEqual(2);
  });

  test("with no second worker free, one worker reads every range", async () => {
    let table!: Table;
    expect(await splitCount(one, async () => (table = await decode(await one.stream(validated("SELECT * FROM dense")))))).toBe(0);
    expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT * FROM dense", { safeIntegers: true }));
  });

  test("an empty table is a valid stream with the schema and no rows", async () => {
    const table = await decode(await two.stream(validated("SELECT * FROM empty")));
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => f.name)).toEqual(["id", "v"]);
  });
});

describe("an interactive query during a filtered split scan", () => {
  /** A WHERE costly per row (`likes` LIKEs, in groups of 50: the dialect refuses expressions nested 64 levels deep) or n even. */
  const costly = (likes: number) => {
    const like = (i: number) => `t LIKE '%r%o%w%${i}%x%'`;
    const groups = Array.from({ length: likes / 50 }, (_, g) => `(${Array.from({ length: 50 }, (_, i) => like(g * 50 + i)).join(" OR ")})`);
    return `SELECT * FROM dense WHERE ${groups.join(" OR ")} OR n % 2 = 0`;
  };
  // A LIMIT within the interactive lane, beyond what the HTTP thread reads itself: it needs a worker.
  const interactiveSql = "SELECT * FROM dense WHERE n > 0 LIMIT 5000";

  /** Starts `bulkSql` split on two workers and read by its client; then runs the interactive query. */
  async function interactiveDuring(bulkSql: string, executor = two) {
    const splits = executor.engine.stats.splitScans;
    const substituted = executor.engine.stats.helpersSubstituted;
    let bulkDone = false;
    const bulk = executor.stream(validated(bulkSql)).then(decode).then((table) => ((bulkDone = true), table));
    for (let i = 0; i < 500 && executor.engine.stats.splitScans === splits; i++) await Bun.sleep(2);
    expect(executor.engine.stats.splitScans - splits).toBe(1);
    const interactive = await decode(await executor.stream(validated(interactiveSql)));
    const answeredDuringBulk = !bulkDone;
    expect(rowsOf(interactive)).toEqual(sqliteValues(path, interactiveSql, { safeIntegers: true }));
    expect(rowsOf(await bulk)).toEqual(sqliteValues(path, bulkSql, { safeIntegers: true }));
    return { answeredDuringBulk, substituted: executor.engine.stats.helpersSubstituted - substituted };
  }

  test("a costly WHERE: the helper, not back in time, is substituted by a fresh worker and finishes its ranges", async () => {
    // 350 LIKEs (~9 KB of SQL): a range takes ~70 ms, the export ~1 s.
    expect(await interactiveDuring(costly(350))).toEqual({ answeredDuringBulk: true, substituted: 1 });
  }, SLOW_MACHINE_MS);

  test("a cheap WHERE: the helper finishes its ranges and goes back, no fresh worker is started", async () => {
    // The helper's few queued ranges take milliseconds; it has 1 s here, not 25 ms, so the test does
    // not race a busy machine's scheduler.
    const patient = new SqliteExecutor(path, { ...limits, helperReturnMs: 1_000 }, 2);
    try {
      await decode(await patient.stream(validated("SELECT * FROM dense"))); // both workers warm, like `two`'s
      expect(await interactiveDuring("SELECT * FROM dense WHERE n % 3 <> 0", patient)).toEqual({ answeredDuringBulk: true, substituted: 0 });
    } finally {
      patient.close();
    }
  }, SLOW_MACHINE_MS);

  test("a costly WHERE, but the interactive query gets another worker first: the helper is not substituted", async () => {
    // Three workers: the split scan and its helper, and a second export on the third. The
    // interactive query waits and asks the helper back; the second export's client leaves at once,
    // which frees its worker for the interactive query before the helper's time is up. That time is
    // 1 s here, not 25 ms, so freeing a worker does not race a busy machine's scheduler; the split
    // scan takes several seconds, so a helper wrongly substituted would still be seen.
    const three = new SqliteExecutor(path, { ...limits, helperReturnMs: 1_000 }, 3);
    try {
      const bulkSql = costly(350);
      const splits = three.engine.stats.splitScans;
      let bulkDone = false;
      const bulk = three.stream(validated(bulkSql)).then(decode).then((table) => ((bulkDone = true), table));
      for (let i = 0; i < 500 && three.engine.stats.splitScans === splits; i++) await Bun.sleep(2);
      expect(three.engine.stats.splitScans - splits).toBe(1);
      const other = await three.stream(validated(bulkSql));
      expect(three.engine.stats.splitScans - splits).toBe(1);
      const interactive = three.stream(validated(interactiveSql));
      await Bun.sleep(1);
      await ("complete" in other ? Promise.resolve() : other.body.cancel());
      expect(rowsOf(await decode(await interactive))).toEqual(sqliteValues(path, interactiveSql, { safeIntegers: true }));
      // It waited (the helper was asked back) and was answered while the split scan still ran.
      expect({ askedBack: three.engine.stats.helpersAskedBack, answeredDuringBulk: !bulkDone }).toEqual({ askedBack: 1, answeredDuringBulk: true });
      expect(rowsOf(await bulk)).toEqual(sqliteValues(path, bulkSql, { safeIntegers: true }));
      expect(three.engine.stats.helpersSubstituted).toBe(0);
    } finally {
      three.close();
    }
  }, SLOW_MACHINE_MS);
});

describe("ranges of wide rows the width samples miss", () => {
  /** Characters of `body` in each record batch of the result. */
  const textPerBatch = (table: Table) => table.batches.map((batch) => batch.getChild("body")!.toArray().reduce((sum: number, text: string) => sum + text.length, 0));

  test.each([
    ["SELECT * FROM clustered", CLUSTERED_ROWS],
    ["SELECT * FROM clustered WHERE n % 7 <> 0", CLUSTERED_ROWS - Math.floor(CLUSTERED_ROWS / 7)],
  ])("%s: split, a wide range sent in parts of BATCH_MAX_BYTES, in order", async (sql, rows) => {
    let table!: Table;
    expect(await splitCount(two, async () => (table = await decode(await two.stream(validated(sql)))))).toBe(1);
    expect(table.numRows).toBe(rows);
    expect(rowsOf(table)).toEqual(sqliteValues(path, sql, { safeIntegers: true }));
    // A range of 24 MB of text was one batch; now none holds more than BATCH_MAX_BYTES and a row.
    expect(Math.max(...textPerBatch(table))).toBeLessThanOrEqual(BATCH_MAX_BYTES + CLUSTER_WIDTH);
  }, SLOW_MACHINE_MS);

  test("csv: one worker's bytes and two workers' bytes are the same", async () => {
    const text = async (executor: SqliteExecutor) => new Response(await streamBody(executor, "csv", "SELECT * FROM clustered")).text();
    let split = "";
    expect(await splitCount(two, async () => (split = await text(two)))).toBe(1);
    expect(split).toBe(await text(one));
  }, SLOW_MACHINE_MS);

  test("a client reading slowly holds the workers back, and that time does not count against the time limit", async () => {
    // The client reads the first part, then nothing for longer than the whole time limit. No spill
    // budget, so the response never spills and the workers stay held back however long the
    // client waits: the first worker once MAX_IN_FLIGHT parts of range 0 are unread, the helper
    // once it keeps MAX_IN_FLIGHT parts of range 2 (which wait for range 0 to be sent). Reading
    // the 48 MB takes ~0.3 s on an idle machine and a few seconds on two loaded cores, within the
    // limit; the client's pause alone exceeds it, so were it counted the query would be stopped.
    const limitMs = 8_000;
    const patient = new SqliteExecutor(path, { ...limits, queryTimeoutMs: limitMs, spillBudgetMb: 0 }, 2);
    try {
      await decode(await patient.stream(validated("SELECT * FROM dense LIMIT 20000"))); // both workers started
      const result = await patient.stream(validated("SELECT * FROM clustered"));
      expect(patient.engine.stats.splitScans).toBe(1);
      expect("body" in result).toBe(true);
      const reader = (result as { body: ReadableStream<Uint8Array> }).body.getReader();
      const chunks: Uint8Array[] = [];
      let paused = false;
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        chunks.push(read.value);
        if (!paused && read.value.byteLength > 1_000_000) {
          paused = true;
          await Bun.sleep(limitMs + 500);
          // Held back all along: parts of range 2 were kept, never more than the helper may have in flight.
          expect(patient.engine.stats.mostPartsKept).toBeGreaterThan(0);
          expect(patient.engine.stats.mostPartsKept).toBeLessThanOrEqual(MAX_IN_FLIGHT);
        }
      }
      expect(paused).toBe(true);
      const table = tableFromIPC(Buffer.concat(chunks));
      expect(table.numRows).toBe(CLUSTERED_ROWS);
      expect(String(table.get(600)!.body)).toBe(String.fromCharCode(97 + (601 % 26)).repeat(CLUSTER_WIDTH));
      expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT * FROM clustered", { safeIntegers: true }));
      expect(patient.spilledBytes).toBe(0);
      expect(patient.engine.stats.mostPartsKept).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    } finally {
      patient.close();
    }
  }, SLOW_MACHINE_MS);
});

describe("a helper asked back while it keeps parts of a wide range", () => {
  test("a fresh worker answers the interactive query; the helper finishes its ranges, parts included, and the export is whole", async () => {
    const executor = new SqliteExecutor(path, limits, 2);
    const sql = "SELECT * FROM clustered WHERE n % 7 <> 0";
    try {
      await decode(await executor.stream(validated("SELECT * FROM dense LIMIT 20000"))); // both workers started
      const result = await executor.stream(validated(sql));
      // The helper joins when its read transaction is open, which a loaded machine can delay past the first batch.
      for (let i = 0; i < 100 && executor.engine.stats.splitScans === 0; i++) await Bun.sleep(20);
      expect({ split: executor.engine.stats.splitScans, streamed: "body" in result }).toEqual({ split: 1, streamed: true });
      const reader = (result as { body: ReadableStream<Uint8Array> }).body.getReader();
      const chunks: Uint8Array[] = [];
      // Read slowly until the helper keeps parts of range 2 (range 0 is still being sent) …
      for (let i = 0; i < 100 && executor.engine.stats.mostPartsKept === 0; i++) {
        const read = await reader.read();
        if (read.done) break;
        chunks.push(read.value);
        await Bun.sleep(100);
      }
      expect(executor.engine.stats.mostPartsKept).toBeGreaterThan(0);
      // … then, the client not reading, an interactive query asks it back. It cannot finish its
      // range at once (range 0 waits for the client, until it spills after STALL_MS): a fresh
      // worker takes its place for the query, and it goes on with its range.
      const interactiveSql = "SELECT * FROM dense WHERE n > 0 LIMIT 5000";
      expect(rowsOf(await decode(await executor.stream(validated(interactiveSql))))).toEqual(sqliteValues(path, interactiveSql, { safeIntegers: true }));
      // (The helper may already have finished its ranges and left by now: on a loaded machine
      // range 0 spills after STALL_MS while the query runs, which frees it. So the workers running
      // are counted only at the end.)
      expect({ askedBack: executor.engine.stats.helpersAskedBack, substituted: executor.engine.stats.helpersSubstituted }).toEqual({ askedBack: 1, substituted: 1 });
      for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
      expect(rowsOf(tableFromIPC(Buffer.concat(chunks)))).toEqual(sqliteValues(path, sql, { safeIntegers: true }));
      // The helper left once its ranges were read.
      for (let i = 0; i < 250 && executor.engine.workersRunning > 2; i++) await Bun.sleep(20);
      expect(executor.engine.workersRunning).toBe(2);
    } finally {
      executor.close();
    }
  }, SLOW_MACHINE_MS);
});

describe("formats on a split scan", () => {
  test.each(["csv", "ndjson"])("%s: one worker's bytes and two workers' bytes are the same", async (name) => {
    const format = formatNamed(name)!;
    const text = async (executor: SqliteExecutor) => {
      const result = await executor.stream(validated("SELECT * FROM dense"), format);
      const body = "complete" in result ? new Blob(result.complete as BlobPart[]) : result.body;
      return new Response(body).text();
    };
    let split = "";
    expect(await splitCount(two, async () => (split = await text(two)))).toBe(1);
    expect(split).toBe(await text(one));
    expect(split.split("\n").filter((line) => line !== "").length).toBe(name === "csv" ? 100_001 : 100_000);
  });

  test.each(["json", "parquet"])("%s, whose pieces cannot simply be joined, is read by one worker", async (name) => {
    expect(await splitCount(two, async () => void (await new Response(await streamBody(two, name)).arrayBuffer()))).toBe(0);
  });
});

async function streamBody(executor: SqliteExecutor, name: string, sql = "SELECT * FROM dense") {
  const result = await executor.stream(validated(sql), formatNamed(name)!);
  return "complete" in result ? new Blob(result.complete as BlobPart[]) : result.body;
}

describe("queries that are not split", () => {
  test.each([
    // A covering index: SQLite returns index order, which ranges of rowids would not.
    ["SELECT a FROM covered", "rollback journal"],
    // A WHERE that SQLite answers through the rowid or an index: not a scan in rowid order of the table.
    ["SELECT * FROM dense WHERE id > 10", "rollback journal"],
    ["SELECT * FROM covered WHERE a = 'a7'", "rollback journal"],
    // 'now' is read once per statement, and each range would be a statement of its own.
    ["SELECT id FROM dense WHERE date('now') > '2000-01-01'", "rollback journal"],
    ["SELECT * FROM dense ORDER BY n DESC", "rollback journal"],
    ["SELECT * FROM dense LIMIT 50000", "rollback journal"],
    // WAL: the second worker could see a later commit than the first.
    ["SELECT * FROM dense", "WAL"],
  ])("%s (%s)", async (sql, mode) => {
    const file = mode === "WAL" ? walPath : path;
    const from = () => (mode === "WAL" ? walCatalog : catalog);
    const executor = () => (mode === "WAL" ? wal : two);
    let table!: Table;
    expect(await splitCount(executor(), async () => (table = await decode(await executor().stream(validated(sql, from())))))).toBe(0);
    expect(rowsOf(table)).toEqual(sqliteValues(file, sql, { safeIntegers: true }));
  });

  test("a table whose rowid span exceeds max_rows is counted on one worker first", async () => {
    const table = await decode(await two.stream(validated("SELECT * FROM wide_span")));
    expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT * FROM wide_span", { safeIntegers: true }));
  });
});

describe("a writer during a split scan", () => {
  test("the scan keeps one snapshot, and the write lands once the scan ends", async () => {
    const dir = tempDir();
    const file = join(dir, "written.sqlite");
    copyFileSync(path, file);
    const config = resolveConfig(
      { database: { sqlite: file }, ledger: { path: join(dir, "l.sqlite") }, limits: { max_rows: MAX_ROWS }, tables: TABLES.map((name) => ({ name })) },
      { baseDir: dir, env: {} },
    );
    const executor = new SqliteExecutor(file, config.limits, 2);
    try {
      // Both workers started (on a loaded machine a helper still starting joins too late to split).
      await decode(await executor.stream(validated("SELECT * FROM dense")));
      const before = executor.engine.stats.splitScans;
      const result = await executor.stream(validated("SELECT * FROM dense"));
      const reader = (result as { body: ReadableStream<Uint8Array> }).body.getReader();
      const chunks: Uint8Array[] = [(await reader.read()).value!];
      // Another process rewrites rows the scan has not reached, while both workers hold the shared lock.
      const writer = Bun.spawn(
        ["bun", "-e", `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(file)}); db.run("PRAGMA busy_timeout = 30000"); db.run("UPDATE dense SET t = 'changed' WHERE id > 50000"); console.log("written");`],
        { stdout: "pipe", stderr: "inherit" },
      );
      await Bun.sleep(300);
      expect(writer.exitCode).toBeNull(); // it waits for the scan
      for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
      const table = tableFromIPC(new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer()));
      expect(executor.engine.stats.splitScans - before).toBe(1);
      expect(table.numRows).toBe(100_000);
      expect(rowsOf(table)).toEqual(sqliteValues(path, "SELECT * FROM dense", { safeIntegers: true }));
      expect(await writer.exited).toBe(0);
      expect(await new Response(writer.stdout).text()).toBe("written\n");
      const after = await decode(await executor.stream(validated("SELECT t FROM dense")));
      expect(after.getChild("t")!.toArray().filter((t: string | null) => t === "changed").length).toBe(50_000);
    } finally {
      executor.close();
    }
  });
});

describe("failures on a split scan", () => {
  test("a value that does not fit names its rowid, and the workers are fine afterwards", async () => {
    await expect(two.collect(validated("SELECT * FROM misfit"))).rejects.toThrow(/misfit.*column 'n'.*rowid 17777/s);
    const table = await decode(await two.stream(validated("SELECT * FROM dense")));
    expect(table.numRows).toBe(100_000);
  });

  test("filtered: a value that does not fit names its rowid", async () => {
    await expect(two.collect(validated("SELECT * FROM misfit WHERE id > 0 AND n IS NOT NULL"))).rejects.toThrow(/misfit.*column 'n'.*rowid 17777/s);
  });

  test("a client that goes away stops the scan; the next query is answered", async () => {
    const result = await two.stream(validated("SELECT * FROM dense"));
    expect("body" in result).toBe(true);
    const reader = (result as { body: ReadableStream<Uint8Array> }).body.getReader();
    await reader.read();
    await reader.cancel();
    expect((await decode(await two.stream(validated("SELECT label, k FROM sparse")))).numRows).toBe(30_000);
  });

  test("the time limit stops both workers", async () => {
    const config = resolveConfig(
      { database: { sqlite: path }, ledger: { path: join(tempDir(), "l.sqlite") }, limits: { max_rows: MAX_ROWS, query_timeout_ms: 2 }, tables: TABLES.map((name) => ({ name })) },
      { baseDir: tempDir(), env: {} },
    );
    const hasty = new SqliteExecutor(path, config.limits, 2);
    try {
      await expect(hasty.collect(validated("SELECT * FROM dense"))).rejects.toThrow(/longer than the 2 ms limit/);
      // A filtered scan, whose WHERE rejects every row: stopped at the limit all the same.
      const slow = "SELECT * FROM dense WHERE length(replace(replace(t, 'r', 'rr'), 'o', 'oo')) < 0";
      await expect(hasty.collect(validated(slow))).rejects.toThrow(/longer than the 2 ms limit/);
    } finally {
      hasty.close();
    }
  });
});
