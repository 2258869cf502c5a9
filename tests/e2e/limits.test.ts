/**
 * Limits through a real server (ARCHITECTURE.md §2 `limits`, §8): queries run off the HTTP thread,
 * a query over the time limit is stopped (400) and its worker replaced, results over max_rows
 * are refused rather than truncated, and over-long query text is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tableFromIPC } from "apache-arrow";
import { startServer, type RunningServer } from "../../src/server.ts";
import { PAY_TO, typesConfig, typesDatabaseWithBigTable } from "../support/fixtures.ts";
import { slowQuery } from "../support/slow-query.ts";
import { serveConfig } from "../support/spawned-server.ts";
import { cpuMs } from "../../bench/processes.ts";

let fast: RunningServer;
let strict: RunningServer;
let timed: RunningServer;
let single: RunningServer;
let dir: string;
let tables: Record<string, unknown>[];

beforeAll(async () => {
  const fixture = typesDatabaseWithBigTable(300_000);
  fixture.db.close();
  dir = fixture.dir;
  tables = [
    { name: "big", description: "Many rows" },
    { name: "cheap_items", description: "A view" },
    {
      name: "items",
      description: "Paid per row (200 rows)",
      price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.001" }],
    },
  ];
  fast = await startServer(typesConfig(dir, { tables, limits: { query_timeout_ms: 60000 } }), { workers: 2 });
  strict = await startServer(
    typesConfig(dir, { tables, ledger: { path: "ledger2.sqlite" }, limits: { query_timeout_ms: 60000, max_rows: 50, max_query_bytes: 300 } }),
    { workers: 2 },
  );
  // The slow query takes seconds even on an idle machine; quick ones have the whole second.
  timed = await startServer(typesConfig(dir, { tables, ledger: { path: "ledger3.sqlite" }, limits: { query_timeout_ms: 1000 } }), { workers: 2 });
  single = await startServer(typesConfig(dir, { tables, ledger: { path: "ledger4.sqlite" }, limits: { query_timeout_ms: 1000 } }), { workers: 1 });
});
afterAll(async () => {
  await fast.stop();
  await strict.stop();
  await timed.stop();
  await single.stop();
});

const query = (server: RunningServer, sql: string) => fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`);

describe("never blocked", () => {
  test("GET /api/ answers while a slow query runs", async () => {
    // The slow query takes seconds on an idle machine and can take a minute on two loaded cores:
    // once the discovery document has come while it still runs, its client goes away (its worker
    // is recalled) rather than waiting for it to end.
    const finished: string[] = [];
    const client = new AbortController();
    const slow = fetch(`${fast.url}/api/query?query=${encodeURIComponent(slowQuery(1))}`, { signal: client.signal })
      .then(async (res) => {
        await res.arrayBuffer();
        finished.push("slow query");
      })
      .catch((error: Error) => expect(error.name).toBe("AbortError"));
    await Bun.sleep(50);
    const discovery = await fetch(`${fast.url}/api/`);
    finished.push("discovery");
    expect(discovery.status).toBe(200);
    expect(finished).toEqual(["discovery"]);
    client.abort();
    await slow;
    expect(finished).toEqual(["discovery"]);
  });
});

describe("query_timeout_ms", () => {
  test("stops a slow query with 400, replaces the worker, and keeps serving", async () => {
    // More timeouts than workers: each stopped worker must have been replaced.
    for (let i = 0; i < 3; i++) {
      const res = await query(timed, slowQuery(i));
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("text/plain");
      expect(await res.text()).toContain("longer than the 1000 ms limit");
    }
    const ok = await query(timed, "SELECT id FROM big WHERE id <= 3");
    expect(ok.status).toBe(200);
    expect(tableFromIPC(new Uint8Array(await ok.arrayBuffer())).numRows).toBe(3);
  });

  test("a stopped query stops using the CPU: its worker abandons the statement instead of finishing the scan", async () => {
    // A server process of its own, so that only its CPU time is counted (this process runs other
    // tests' servers, whose leftover work would count too).
    const own = await serveConfig(dir, { server: { bind: "127.0.0.1:0" }, database: { sqlite: "types.sqlite" }, ledger: { path: "ledger5.sqlite" }, tables, limits: { query_timeout_ms: 1000 } });
    try {
      const res = await fetch(`${own.url}/api/query?query=${encodeURIComponent(slowQuery(99))}`);
      expect(res.status).toBe(400);
      await Bun.sleep(200);
      // Each stopped query would otherwise keep a core busy for seconds after its 400.
      const before = cpuMs(own.pid);
      await Bun.sleep(1000);
      expect(cpuMs(own.pid) - before).toBeLessThan(400);
    } finally {
      await own.stop();
    }
  }, 120_000);
});

describe("busy workers", () => {
  test("a request that waits longer than the time limit for a worker gets 503 with Retry-After; small reads still answer", async () => {
    // One worker, 1 s limit: the first slow query holds it until 1 s, the second from then until 2 s;
    // the third, waiting since 0.6 s, gives up at 1.6 s.
    const statuses = [0, 300, 600].map(async (delay, i) => {
      await Bun.sleep(delay);
      const res = await query(single, slowQuery(10 + i));
      return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
    });
    await Bun.sleep(800);
    const small = await query(single, "SELECT id FROM big LIMIT 5");
    expect(small.status).toBe(200);
    const [first, second, third] = await Promise.all(statuses);
    expect([first!.status, second!.status]).toEqual([400, 400]);
    expect(third).toEqual({ status: 503, retryAfter: "1", text: "All 1 query workers stayed busy for 1000 ms: retry shortly" });
  });
});

describe("max_rows", () => {
  test("refuses a result over the limit instead of truncating it", async () => {
    const res = await query(strict, "SELECT id FROM big WHERE id <= 51");
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("The result has 51 rows, more than the limit of 50: add a WHERE condition or a LIMIT of at most 50");
  });

  test.each([
    ["SELECT id FROM big LIMIT 50", 200],
    ["SELECT id FROM big LIMIT 51", 400],
    ["SELECT id FROM big WHERE id <= 50", 200],
    ["SELECT id FROM big WHERE id <= 51", 400],
    ["SELECT id FROM big", 400],
  ])("%s → %d", async (sql, status) => {
    const res = await query(strict, sql);
    expect(res.status).toBe(status);
    if (status === 200) expect(tableFromIPC(new Uint8Array(await res.arrayBuffer())).numRows).toBe(50);
    else expect(await res.text()).toContain("more than the limit of 50");
  });
});

describe("max_rows on a per_row table", () => {
  test("a result over the limit is refused with 400 at the quote, not offered for payment", async () => {
    const res = await query(strict, "SELECT id FROM items");
    expect(res.status).toBe(400);
    expect(res.headers.get("payment-required")).toBeNull();
    expect(await res.text()).toBe("The result has 200 rows, more than the limit of 50: add a WHERE condition or a LIMIT of at most 50");
  });

  test("a result within the limit is quoted", async () => {
    const res = await query(strict, "SELECT id FROM items WHERE id <= 50");
    expect(res.status).toBe(402);
    expect((await res.json()).resource.description).toEndWith(" - 50 rows");
  });
});

describe("max_query_bytes", () => {
  test("refuses query text over the limit", async () => {
    const sql = `SELECT id FROM big WHERE id IN (${Array.from({ length: 100 }, (_, i) => i).join(", ")})`;
    expect(new TextEncoder().encode(sql).length).toBeGreaterThan(300);
    const res = await query(strict, sql);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("300");
  });
});
