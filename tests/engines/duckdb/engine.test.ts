/**
 * The DuckDB engine's own guarantees (DESIGN.md §14 "Reads only, bounded"), beyond the engine
 * contract (tests/engines/contract.test.ts): a read is pulled (a reader that stops asking holds
 * DuckDB back, and memory does not grow), closing it ends it at once and frees the source for the
 * next read; a dashboard's sample spreads evenly along a time column, most recent first, with the
 * table's row count; a reload cannot serve files the source did not open; a STRUCT's members are
 * converted, or refused, by their own types' rules.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { join } from "node:path";
import { resolveConfig } from "../../../src/config/load.ts";
import { describeCatalog, openEngines } from "../../../src/engines/sources.ts";
import { evenPositions } from "../../../src/engines/even-sample.ts";
import { DuckDBEngine } from "../../../src/engines/duckdb/engine.ts";
import { openDuckRead } from "../../../src/engines/duckdb/read.ts";
import { mapDuckType } from "../../../src/engines/duckdb/types.ts";
import { ValueDoesNotFit } from "../../../src/arrow/encode.ts";
import { tempDir } from "../../support/fixtures.ts";

let instance: DuckDBInstance;

beforeAll(async () => {
  instance = await DuckDBInstance.create(":memory:");
});

afterAll(() => instance?.closeSync());

describe("a pulled read", () => {
  test("a reader that stops asking holds the query back: memory stays flat; closing ends it at once and the next read runs", async () => {
    // Ten billion rows: only a read that waits for its reader can start answering this.
    const read = await openDuckRead(instance, { select: "SELECT range AS id, md5(range::VARCHAR) AS note FROM range(10000000000)", types: [{ kind: "int64" }, { kind: "utf8" }], count: null, timeoutMs: 10_000 });
    const batches = read.batches[Symbol.asyncIterator]();
    const first = await batches.next();
    expect(first.done).toBe(false);
    expect(first.value!.rows[0]).toEqual([0n, "cfcd208495d565ef66e7dff9f98764da"]);
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    await Bun.sleep(1_500);
    Bun.gc(true);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    const second = await batches.next();
    expect(second.value!.firstRowIndex).toBe(first.value!.rows.length);
    const started = performance.now();
    await read.close(new Error("the reader went away"));
    expect(performance.now() - started).toBeLessThan(1_000);
    const next = await openDuckRead(instance, { select: "SELECT 42::BIGINT", types: [{ kind: "int64" }], count: null, timeoutMs: 5_000 });
    const rows = (await Array.fromAsync(next.batches)).flatMap((batch) => batch.rows);
    expect(rows).toEqual([[42n]]);
  }, 30_000);

  test("a reader that keeps reading: memory stays flat while 2,000,000 rows go through", async () => {
    const read = await openDuckRead(instance, { select: "SELECT range AS id, md5(range::VARCHAR) AS note FROM range(2000000)", types: [{ kind: "int64" }, { kind: "utf8" }], count: null, timeoutMs: 50_000 });
    let rows = 0;
    let before = 0;
    let peak = 0;
    for await (const batch of read.batches) {
      rows += batch.rows.length;
      if (before === 0) {
        Bun.gc(true);
        before = process.memoryUsage().rss;
      } else if (rows % 200_000 < batch.rows.length) {
        // Measured while the read runs: what a read keeps alive is freed once it ends.
        Bun.gc(true);
        peak = Math.max(peak, process.memoryUsage().rss - before);
      }
    }
    expect(rows).toBe(2_000_000);
    // Flat: DuckDB's own buffers and thread arenas stay under 128 MB on two loaded cores, where a
    // read that keeps its chunks alive grows past 400 MB by the end.
    expect(peak).toBeLessThan(128 * 1024 * 1024);
  }, 60_000);

  test("the count and the rows from one transaction", async () => {
    const read = await openDuckRead(instance, { select: "SELECT range AS id FROM range(5000)", types: [{ kind: "int64" }], count: "SELECT count(*) FROM range(5000)", timeoutMs: 5_000 });
    expect(read.count).toBe(5000);
    const rows = (await Array.fromAsync(read.batches)).reduce((n, batch) => n + batch.rows.length, 0);
    expect(rows).toBe(5000);
  });

  // A count SQL that would fail shows whether it ran; a constant one shows that its answer is the one used.
  test.each([
    ["a small result is its own count: the count's pass over the table is not run", 5_000, "SELECT error('the count ran')", 5_000],
    ["a large result is counted by the count's SQL, then read", 40_000, "SELECT 40000::BIGINT", 40_000],
    ["an empty result is its own count", 0, "SELECT error('the count ran')", 0],
  ])("%s", async (_, size, countSql, count) => {
    const read = await openDuckRead(instance, { select: `SELECT range AS id FROM range(${size})`, types: [{ kind: "int64" }], count: countSql, timeoutMs: 5_000 });
    expect(read.count).toBe(count);
    const rows = (await Array.fromAsync(read.batches)).flatMap((batch) => batch.rows);
    expect(rows).toEqual(Array.from({ length: size }, (_, i) => [BigInt(i)]));
  });

  test("a sparse filter's chunks of a few rows are gathered into batches (each batch is a record batch and a write)", async () => {
    // One row in 1,000 of a Parquet file: DuckDB hands over one chunk per 2,048-row vector of the scan, two rows each.
    const file = join(tempDir(), "ids.parquet");
    const writer = await instance.connect();
    await writer.run(`COPY (SELECT range AS id FROM range(2000000)) TO '${file}' (FORMAT parquet)`);
    writer.closeSync();
    const read = await openDuckRead(instance, { select: `SELECT id FROM read_parquet('${file}') WHERE id % 1000 = 0`, types: [{ kind: "int64" }], count: null, timeoutMs: 50_000 });
    const batches = await Array.fromAsync(read.batches);
    const rows = batches.flatMap((batch) => batch.rows);
    expect(rows).toEqual(Array.from({ length: 2000 }, (_, i) => [BigInt(i * 1000)]));
    expect(batches.map((batch) => batch.firstRowIndex)).toEqual(batches.map((_, i) => batches.slice(0, i).reduce((n, b) => n + b.rows.length, 0)));
    // 2,048 rows a batch, or what 100 ms brought: a loaded machine may split it a few more times.
    expect(batches.length).toBeLessThanOrEqual(20);
  }, 60_000);
});

describe("files are opened when the source opens", () => {
  test("a reloaded config naming other files for a table is a problem asking for a restart", async () => {
    const dir = tempDir();
    const writer = await instance.connect();
    for (const name of ["a", "b"]) await writer.run(`COPY (SELECT 1 AS id) TO '${join(dir, `${name}.parquet`)}' (FORMAT parquet)`);
    writer.closeSync();
    const configOf = (files: string) => resolveConfig({ databases: { lake: { duckdb: ":memory:" } }, tables: [{ name: "t", files }] }, { baseDir: dir, env: {} });
    const started = configOf("./a.parquet");
    const engine = new DuckDBEngine({ name: "lake", path: ":memory:", tables: started.tables, settings: { memoryLimitMb: 1024, threads: null } }, { maxRows: 100, queryTimeoutMs: 1_000 });
    try {
      expect((await engine.describe([{ config: started.tables[0]!, index: 0 }])).problems).toEqual([]);
      const reloaded = configOf("./*.parquet");
      const described = await engine.describe([{ config: reloaded.tables[0]!, index: 0 }]);
      expect(described.problems).toEqual([`tables[0].files: the files of a DuckDB source's tables are opened when arrow402 starts; restart it to serve ${join(dir, "*.parquet")}`]);
    } finally {
      engine.close();
    }
  });
});

describe("a dashboard's sample", () => {
  test("cap rows spread evenly along the time column, most recent first, the first and last included; the whole table when smaller", async () => {
    const dir = tempDir();
    const writer = await instance.connect();
    // Written out of order: the sample follows the column, not the files.
    await writer.run(`COPY (SELECT 1000 - x AS id, TIMESTAMP '2024-01-01' + (1000 - x) * INTERVAL 1 HOUR AS at FROM range(0, 1000) t(x)) TO '${join(dir, "events.parquet")}' (FORMAT parquet)`);
    writer.closeSync();
    const config = resolveConfig({ databases: { lake: { duckdb: ":memory:" } }, tables: [{ name: "events", files: "./events.parquet" }] }, { baseDir: dir, env: {} });
    const engines = openEngines(config);
    try {
      const table = (await describeCatalog(config, engines)).table("events")!;
      const engine = engines.get("lake")!;
      const sample = await engine.sample(table, 10, "at");
      expect(sample.totalRows).toBe(1000);
      expect(sample.sampled).toBe(true);
      expect(sample.rows.map((row) => row[0])).toEqual(evenPositions(1000, 10).map((position) => BigInt(position)).reverse());
      const whole = await engine.sample(table, 5000, null);
      expect(whole).toMatchObject({ totalRows: 1000, sampled: false });
      expect(whole.rows).toHaveLength(1000);
    } finally {
      for (const engine of engines.values()) engine.close();
    }
  });
});

describe("nanosecond timestamps (pandas' Parquet)", () => {
  test("whole microseconds are read exactly; a finer part is refused, never rounded", async () => {
    const dir = tempDir();
    const writer = await instance.connect();
    await writer.run(`COPY (SELECT * FROM (VALUES (1, '2024-01-02 03:04:05.123456'::TIMESTAMP_NS), (2, '2024-01-02 03:04:05.123456789'::TIMESTAMP_NS)) t(id, seen)) TO '${join(dir, "ns.parquet")}' (FORMAT parquet)`);
    writer.closeSync();
    const config = resolveConfig({ databases: { lake: { duckdb: ":memory:" } }, tables: [{ name: "ns", files: "./ns.parquet" }] }, { baseDir: dir, env: {} });
    const engines = openEngines(config);
    try {
      const table = (await describeCatalog(config, engines)).table("ns")!;
      expect(table.columns.map((c) => [c.name, c.kind, c.declaredType])).toEqual([["id", "int32", "INTEGER"], ["seen", "timestamp_us", "TIMESTAMP_NS"]]);
      const misfits: string[] = [];
      const scanned = await engines.get("lake")!.scan(table, (found) => misfits.push(`${found.row}: ${found.detail}`));
      expect(scanned.rows).toBe(2);
      expect(misfits).toEqual(["row 2: the timestamp 2024-01-02 03:04:05.123456789 has a part finer than a microsecond, which Timestamp(µs) cannot hold"]);
      const sample = await engines.get("lake")!.sample(table, 1, null).catch((error: Error) => error);
      expect(sample).toBeInstanceOf(Error);
    } finally {
      for (const engine of engines.values()) engine.close();
    }
  });
});

describe("STRUCT values", () => {
  test("members are converted by their own type's rules; a member that does not fit is refused, named by member, never changed", async () => {
    const type = mapDuckType("STRUCT(h HUGEINT, s STRUCT(t TIMESTAMP_NS)[])").type;
    const select = (h: string, t: string) => `SELECT {'h': ${h}::HUGEINT, 's': [{'t': '${t}'::TIMESTAMP_NS}, NULL]} AS v UNION ALL SELECT NULL`;
    const fits = await openDuckRead(instance, { select: select("-99999999999999999999999999999999999999", "2024-01-02 03:04:05.123456"), types: [type], count: null, timeoutMs: 5_000 });
    expect((await Array.fromAsync(fits.batches)).flatMap((batch) => batch.rows)).toEqual([[{ h: -(10n ** 38n - 1n), s: [{ t: 1_704_164_645_123_456n }, null] }], [null]]);
    for (const [h, t, detail] of <[string, string, string][]>[
      ["170141183460469231731687303715884105727", "2024-01-02 00:00:00", "struct member 'h': unscaled value 170141183460469231731687303715884105727 has more than 38 digits: it does not fit decimal(38,0)"],
      ["1", "2024-01-02 03:04:05.123456789", "struct member 's': struct member 't': the timestamp 2024-01-02 03:04:05.123456789 has a part finer than a microsecond, which Timestamp(µs) cannot hold"],
    ]) {
      const read = await openDuckRead(instance, { select: select(h, t), types: [type], count: null, timeoutMs: 5_000 });
      const refused = await Array.fromAsync(read.batches).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ValueDoesNotFit);
      expect([(refused as ValueDoesNotFit).rowIndex, (refused as ValueDoesNotFit).detail]).toEqual([0, detail]);
    }
  });
});
