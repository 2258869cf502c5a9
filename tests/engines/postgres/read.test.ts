/**
 * One read from a real PostgreSQL (src/engines/postgres/read.ts; DESIGN.md §14 "Reads only,
 * bounded"): the count and the rows from one REPEATABLE READ READ ONLY snapshot, batches pulled
 * (a stalled reader leaves the server waiting in ClientWrite), and every way a read ends —
 * consumer leaves, AbortSignal, deadline, server error, refused value — stops the statement on the
 * server (pg_stat_activity) and gives the one pooled connection back, usable.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { timeLimitError } from "../../../src/results/time-budget.ts";
import { COLLECT_AFTER_BYTES, pacedCollections } from "../../../src/engines/paced-collection.ts";
import { openPgRead, readPgWhole, type PgReadOptions } from "../../../src/engines/postgres/read.ts";
import { BinaryCopyDecoder, type DecodedBatch } from "../../../src/engines/postgres/copy-binary.ts";
import { PgValueRefused } from "../../../src/engines/postgres/value-refusal.ts";
import type { DecodeColumn } from "../../../src/engines/postgres/types.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();
/** The reads' pool: one connection, so a read that does not give it back makes the next call wait. */
let pool: SQL;
/** Watches pg_stat_activity and writes concurrently. */
let monitor: SQL;

const ROWS = 200_000;
const columns: DecodeColumn[] = [
  { name: "id", type: { kind: "int64" }, wire: "int8" },
  { name: "ts", type: { kind: "timestamp_us_utc" }, wire: "timestamp" },
  { name: "label", type: { kind: "utf8" }, wire: "text" },
];
const select = `SELECT id, ts, label FROM events ORDER BY id`;

/**
 * What a stalled read may leave unread is bounded by Bun (readable()'s 64 KiB queue, then it stops
 * reading the socket: about 0.3 MB read ahead whatever the result) and by the kernel's socket
 * buffers, which are not: receive-buffer autotuning grows a connection that read fast up to
 * tcp_rmem's maximum (32 MB on Linux's defaults), with tcp_wmem's (4 MB) on the server's side. The
 * events table (14 MB on the wire) can therefore sit whole in those buffers, the statement done.
 * A stalled read is watched on a stream of rows many times larger than the kernel could ever
 * buffer, produced as it is sent (a nested loop over a small series and 2000 rows computed once:
 * no md5 per row, so the server fills the buffers within tens of milliseconds), so it must block.
 */
const LARGE_ROWS = 4_000_000;
/** Bytes per row of `large` in binary COPY: field count, then length + value for each column. */
const LARGE_ROW_BYTES = 2 + (4 + 8) + (4 + 8) + (4 + 38);
const large = `WITH b AS MATERIALIZED (SELECT b, timestamptz '2000-01-01 00:00:00+00' + b * interval '1 second' AS ts, md5(b::text) || ' label' AS label
                                      FROM generate_series(0, 1999) b)
               SELECT (a * 2000 + b.b)::int8 AS id, b.ts, b.label FROM generate_series(0, ${LARGE_ROWS / 2000 - 1}) a, b`;

/** The most the kernel lets one loopback connection hold in flight: both sockets' largest buffers. */
function kernelBufferBytes(): number {
  const max = (file: string, fallback: number): number => {
    try {
      return Number(readFileSync(file, "utf8").trim().split(/\s+/).at(-1));
    } catch {
      return fallback;
    }
  };
  return max("/proc/sys/net/ipv4/tcp_rmem", 32 << 20) + max("/proc/sys/net/ipv4/tcp_wmem", 4 << 20);
}

beforeAll(async () => {
  pool = new SQL({ url: postgres.url, max: 1 });
  monitor = new SQL({ url: postgres.url, max: 2 });
  await monitor.unsafe(`
    CREATE TABLE events AS
    SELECT g::int8 AS id, timestamptz '2000-01-01 00:00:00+00' + g * interval '1.000001 second' AS ts, md5(g::text) || ' label' AS label
    FROM generate_series(1, ${ROWS}) g;
    ALTER TABLE events ADD PRIMARY KEY (id);
    CREATE SEQUENCE counter;
  `);
});

afterAll(async () => {
  await pool?.close();
  await monitor?.close();
});

afterEach(async () => {
  // Whatever a test did, its read left nothing running and gave the connection back: a stopped
  // read's ROLLBACK may still be on its way (idle in transaction for a moment), so within 2 s.
  await waitFor(async () => (await running()).length === 0, 2_000).catch(() => {});
  expect(await running()).toEqual([]);
  expect(await usable()).toBe(true);
});

/** The reads' statements the server is still running. */
async function running(): Promise<{ state: string; wait_event: string | null }[]> {
  return (await monitor`
    SELECT state, wait_event FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' AND query NOT LIKE '%pg_stat_activity%'`) as { state: string; wait_event: string | null }[];
}

/** Polls until the server runs none of the reads' statements; the milliseconds it took. */
async function gone(withinMs = 5_000): Promise<number> {
  const started = performance.now();
  while ((await running()).some((r) => r.state === "active")) {
    if (performance.now() - started > withinMs) throw new Error(`the statement still runs on the server after ${withinMs} ms`);
    await Bun.sleep(5);
  }
  return performance.now() - started;
}

/** The pool's one connection answers within 2 s (it was released, not left in a transaction). */
async function usable(): Promise<boolean> {
  const answer = pool`SELECT 1 AS ok`;
  const result = await Promise.race([answer, Bun.sleep(2_000).then(() => null)]);
  if (result === null) {
    answer.cancel();
    return false;
  }
  return (result as { ok: number }[])[0]?.ok === 1;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

function options(extra: Partial<PgReadOptions> = {}): PgReadOptions {
  return { select, columns, timeoutMs: 30_000, ...extra };
}

describe("a full read", () => {
  test("the count and the rows come from one snapshot, in order, in batches", async () => {
    const read = await openPgRead(pool, options({ count: true, batchRows: 50_000 }));
    expect(read.count).toBe(ROWS);
    // Rows written meanwhile are in neither.
    await monitor`INSERT INTO events SELECT g, now(), 'late' FROM generate_series(${ROWS + 1}, ${ROWS + 100}) g`;
    let seen = 0;
    const sizes: number[] = [];
    for await (const batch of read.batches) {
      expect(batch.firstRowIndex).toBe(seen);
      for (const row of batch.rows) expect(row[0]).toBe(BigInt(++seen));
      sizes.push(batch.rows.length);
    }
    expect(seen).toBe(ROWS);
    expect(sizes).toEqual([50_000, 50_000, 50_000, 50_000]);
    await monitor`DELETE FROM events WHERE id > ${ROWS}`;
  });

  test("exact values through the whole path", async () => {
    const read = await openPgRead(pool, options({ select: `SELECT id, ts, label FROM events WHERE id IN (1, ${ROWS}) ORDER BY id` }));
    const rows: unknown[][] = [];
    for await (const batch of read.batches) rows.push(...batch.rows);
    expect(rows).toEqual([
      [1n, 946_684_801_000_001n, "c4ca4238a0b923820dcc509a6f75849b label"],
      [BigInt(ROWS), 946_684_800_000_000n + BigInt(ROWS) * 1_000_001n, `${new Bun.CryptoHasher("md5").update(String(ROWS)).digest("hex")} label`],
    ]);
  });

  test("the transaction is read-only", async () => {
    const read = await openPgRead(pool, options({ select: `SELECT nextval('counter')::int8, now(), 'x'` }));
    const error = (await rejection(read.batches.next())) as { errno?: string; message: string };
    expect(error.errno).toBe("25006");
    expect(error.message).toContain("read-only transaction");
  });

  test("a server error mid-read rejects with it", async () => {
    const read = await openPgRead(pool, options({ select: `SELECT id, ts, (1 / (${ROWS / 2} - id))::text FROM events ORDER BY id` }));
    const error = (await rejection(Array.fromAsync(read.batches))) as { errno?: string };
    expect(error.errno).toBe("22012");
  });

  test("a statement that fails while nobody pulls gives its connection back; the error waits for the consumer", async () => {
    const read = await openPgRead(pool, options({ select: `SELECT id, ts, (1 / (id - 1))::text FROM events ORDER BY id` }));
    await waitFor(async () => (await running()).length === 0);
    expect(await usable()).toBe(true);
    const error = (await rejection(read.batches.next())) as { errno?: string };
    expect(error.errno).toBe("22012");
  });

  test("a server error in the count rejects the open", async () => {
    const failing = `SELECT x FROM (VALUES (1), (0)) AS v(x) WHERE 1 / x > 0`;
    const error = (await rejection(openPgRead(pool, options({ select: failing, count: true })))) as { errno?: string };
    expect(error.errno).toBe("22012");
  });
});

describe("pulled, and stopped on the server", () => {
  test("a stalled reader leaves the server waiting to write; leaving the loop stops it", async () => {
    const read = await openPgRead(pool, options({ select: large, batchRows: 1000 }));
    for await (const batch of read.batches) {
      expect(batch.rows.length).toBe(1000);
      // Nothing is read while nobody pulls: the server fills the socket and waits.
      await waitFor(async () => (await running()).some((r) => r.state === "active" && r.wait_event === "ClientWrite"));
      break;
    }
    expect(await gone()).toBeLessThan(2_000);
  });

  test("an AbortSignal stops the statement while the consumer is away; the read rejects with its reason", async () => {
    const controller = new AbortController();
    const read = await openPgRead(pool, options({ select: large, signal: controller.signal, batchRows: 1000 }));
    await read.batches.next();
    await waitFor(async () => (await running()).some((r) => r.wait_event === "ClientWrite"));
    const reason = new Error("the client went away");
    controller.abort(reason);
    expect(await gone()).toBeLessThan(2_000);
    // The connection is back in the pool before the consumer returns.
    expect(await usable()).toBe(true);
    expect(await rejection(read.batches.next())).toBe(reason);
  });

  test("with no deadline of its own (deadlineMs: Infinity) a stalled read waits, and its signal stops it", async () => {
    const controller = new AbortController();
    const read = await openPgRead(pool, options({ select: large, deadlineMs: Infinity, signal: controller.signal, batchRows: 1000 }));
    try {
      await read.batches.next();
      await waitFor(async () => (await running()).some((r) => r.wait_event === "ClientWrite"));
      await Bun.sleep(1_000);
      expect(await running()).toEqual([{ state: "active", wait_event: "ClientWrite" }]);
      controller.abort(new Error("stop"));
      expect(await gone()).toBeLessThan(2_000);
      expect(((await rejection(read.batches.next())) as Error).message).toBe("stop");
    } finally {
      await read.close();
    }
  });

  test("the deadline stops a stalled read", async () => {
    const opened = performance.now();
    // statement_timeout stays at 30 s: what stops the read is our own deadline, late enough that
    // the server is seen waiting to write before it (tens of ms unloaded, a few hundred loaded).
    const read = await openPgRead(pool, options({ select: large, deadlineMs: 2_000, batchRows: 1000 }));
    await read.batches.next();
    await waitFor(async () => (await running()).some((r) => r.wait_event === "ClientWrite"), 2_000);
    await gone(5_000);
    const stoppedAfter = performance.now() - opened;
    expect(stoppedAfter).toBeGreaterThan(1_950);
    expect(stoppedAfter).toBeLessThan(4_000);
    const error = (await rejection(read.batches.next())) as Error;
    expect(error.message).toBe(timeLimitError(2_000).message);
  });

  test("the deadline stops a statement still computing, and a count", async () => {
    const slow = `SELECT id, ts, label FROM events WHERE pg_sleep(0.5) IS NOT NULL`;
    const started = performance.now();
    const read = await openPgRead(pool, options({ select: slow, timeoutMs: 700 }));
    const error = (await rejection(read.batches.next())) as Error;
    expect(error.message).toBe(timeLimitError(700).message);
    expect(performance.now() - started).toBeLessThan(3_000);
    await gone();

    const counting = (await rejection(openPgRead(pool, options({ select: slow, timeoutMs: 700, count: true })))) as Error;
    expect(counting.message).toBe(timeLimitError(700).message);
  });

  test("a refused value stops the read at its row, naming it", async () => {
    const read = await openPgRead(pool, {
      select: `SELECT id, CASE WHEN id = 150001 THEN 'infinity' ELSE ts END FROM events ORDER BY id`,
      columns: [columns[0]!, columns[1]!],
      timeoutMs: 30_000,
    });
    let delivered = 0;
    const error = await rejection(
      (async () => {
        for await (const batch of read.batches) delivered += batch.rows.length;
      })(),
    );
    expect(error).toBeInstanceOf(PgValueRefused);
    expect((error as PgValueRefused).rowIndex).toBe(150_000);
    expect(delivered).toBeLessThanOrEqual(150_000);
  });

  test("close() before any pull, and an AbortSignal already aborted", async () => {
    const read = await openPgRead(pool, options());
    await read.close();
    expect(await rejection(read.batches.next())).toBeInstanceOf(Error);
    const reason = new Error("gone already");
    expect(await rejection(openPgRead(pool, options({ signal: AbortSignal.abort(reason) })))).toBe(reason);
  });
});

describe("a small read read whole (readPgWhole: the COPY alone, decoded as it arrives)", () => {
  const whole = (sql: string, extra: { timeoutMs?: number; enough?: (batch: DecodedBatch) => boolean; batchRows?: number } = {}) =>
    readPgWhole(pool, {
      select: sql,
      timeoutMs: extra.timeoutMs ?? 30_000,
      decoder: new BinaryCopyDecoder(columns, { batchRows: extra.batchRows }),
      enough: extra.enough ?? (() => false),
    });

  test("the rows, in order, in the batches a pulled read gives; the connection back", async () => {
    const small = `SELECT id, ts, label FROM events WHERE id <= 2500 ORDER BY id`;
    const batches = await whole(small, { batchRows: 1_000 });
    const pulled = await openPgRead(pool, options({ select: small, batchRows: 1_000 }));
    const expected = await Array.fromAsync(pulled.batches);
    expect(batches!.map((b) => [b.length, b.firstRowIndex])).toEqual([
      [1_000, 0],
      [1_000, 1_000],
      [500, 2_000],
    ]);
    expect(batches!.flatMap((b) => b.rows)).toEqual(expected.flatMap((b) => b.rows));
  });

  test("once `enough` says so: null, and the statement stopped on the server", async () => {
    let told = 0;
    const batches = await whole(large, { batchRows: 1_000, enough: () => ++told === 3 });
    expect(batches).toBeNull();
    expect(told).toBe(3);
    await gone();
  });

  test("`enough` is told of the last batch too", async () => {
    expect(await whole(`SELECT id, ts, label FROM events WHERE id <= 10`, { enough: (batch) => batch.length === 10 })).toBeNull();
  });

  test("the deadline stops a statement still computing: the time limit, and nothing runs on", async () => {
    const started = performance.now();
    const error = (await rejection(whole(`SELECT id, ts, label FROM events WHERE pg_sleep(0.5) IS NOT NULL`, { timeoutMs: 700 }))) as Error;
    expect(error.message).toBe(timeLimitError(700).message);
    expect(performance.now() - started).toBeLessThan(3_000);
    await gone();
  });

  test("a server error mid-read rejects with it", async () => {
    const error = (await rejection(whole(`SELECT id, ts, (1 / (${ROWS / 2} - id))::text FROM events ORDER BY id`))) as { errno?: string };
    expect(error.errno).toBe("22012");
  });
});

describe("memory", () => {
  test("a stalled read of a result far larger than the socket buffers holds back: the server waits, memory does not grow with the result", async () => {
    const wireBytes = LARGE_ROWS * LARGE_ROW_BYTES;
    // The result cannot fit the kernel's buffers, so what is not in them is on the server or with us.
    expect(wireBytes).toBeGreaterThan(4 * kernelBufferBytes());
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    const read = await openPgRead(pool, options({ select: large, batchRows: 1000 }));
    try {
      await read.batches.next();
      await waitFor(async () => (await running()).some((r) => r.wait_event === "ClientWrite"));
      // Long enough for a driver that kept reading to have taken hundreds of MB.
      await Bun.sleep(2_000);
      expect(await running()).toEqual([{ state: "active", wait_event: "ClientWrite" }]);
      const grownMb = (process.memoryUsage().rss - before) / 1024 / 1024;
      console.log(`stalled read of ${(wireBytes / 1024 / 1024).toFixed(0)} MB: the process grew by ${grownMb.toFixed(0)} MB`);
      // Measured: 1 to 2 MB (Bun reads about 0.3 MB ahead). A read that took the result would grow past 270 MB.
      expect(grownMb).toBeLessThan(64);
    } finally {
      await read.close();
    }
    expect(await gone()).toBeLessThan(2_000);
  });

  test("a 1,000,000-row read stays within bounded memory", async () => {
    const million = `SELECT g::int8, timestamptz '2000-01-01 00:00:00+00' + g * interval '1 microsecond', md5(g::text) || ' label', g / 7.0::float8
                     FROM generate_series(1, 1000000) g`;
    const read = await openPgRead(pool, {
      select: million,
      columns: [...columns, { name: "f", type: { kind: "float64" }, wire: "float8" }],
      timeoutMs: 60_000,
      count: true,
    });
    // What the read keeps alive, not what the collector has yet to take back (on loaded cores it
    // lags by a hundred MB and more): the live heap after a collection every 16 batches.
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let rows = 0;
    let batches = 0;
    let last: unknown[] = [];
    for await (const batch of read.batches) {
      rows += batch.rows.length;
      last = batch.rows.at(-1)!;
      if (++batches % 16 === 0) {
        Bun.gc(true);
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
    }
    expect(read.count).toBe(1_000_000);
    expect(rows).toBe(1_000_000);
    expect(last).toEqual([1_000_000n, 946_684_801_000_000n, `${new Bun.CryptoHasher("md5").update("1000000").digest("hex")} label`, 1_000_000 / 7]);
    // About 82 MB on the wire and ~300 MB as rows held at once: a read that kept them would grow by that much.
    const grownMb = (peak - before) / 1024 / 1024;
    console.log(`1M rows: the live heap grew by ${grownMb.toFixed(0)} MB at most during the read`);
    expect(grownMb).toBeLessThan(64);
  });

  test.each([
    ["a pulled read", async () => {
      for await (const _ of (await openPgRead(pool, options())).batches);
    }],
    ["a small read read whole", async () => {
      await readPgWhole(pool, { select, timeoutMs: 30_000, decoder: new BinaryCopyDecoder(columns), enough: () => false });
    }],
  ] as const)("%s spends the process's collection budget with the COPY bytes it reads", async (_name, read) => {
    // events is ~14 MB on the wire: at least COLLECT_AFTER_BYTES three times over.
    const before = pacedCollections();
    await read();
    expect(pacedCollections() - before).toBeGreaterThanOrEqual(Math.floor((10 * 1024 * 1024) / COLLECT_AFTER_BYTES));
  });
});

async function waitFor(condition: () => Promise<boolean>, withinMs = 5_000): Promise<void> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await Bun.sleep(10);
  }
}
