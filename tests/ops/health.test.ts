/**
 * /healthz and /readyz through real servers (ARCHITECTURE.md §11 "Operations"): ready when the database
 * file opens and answers and the ledger answers; 503 naming what is not — a database file that is
 * no longer a database, a PostgreSQL ledger that has stopped — and ready again once it is back; not
 * ready while shutting down. Readiness changes are events (and so log lines).
 */
import { SqliteEngine } from "../../src/engines/sqlite/engine.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openReadOnly } from "../../src/engines/sqlite/catalog.ts";
import type { OpsEvent } from "../../src/ops/events.ts";
import { createReadiness } from "../../src/ops/health.ts";
import { createFacilitatorClient } from "../../src/payment/facilitator.ts";
import { openPaymentStore } from "../../src/payment/store/open.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { usePostgres } from "../support/postgres.ts";
import { opsConfig, opsFixture, removeFixture } from "./support.ts";

const postgres = usePostgres();
/** Only free tables: no network is priced, so the facilitator is not needed to be ready. */
const FREE_TABLES = [{ name: "kinds" }, { name: "big" }];

let dir: string;
beforeAll(() => {
  dir = opsFixture();
});
afterAll(() => removeFixture(dir));

async function readyz(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/readyz`);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return { status: response.status, body: await response.json() };
}

/** Polls /readyz until it answers `status` (checks are remembered for a second). */
async function readyzUntil(url: string, status: number): Promise<any> {
  let last: { status: number; body: any } | undefined;
  for (let poll = 0; poll < 60; poll++) {
    last = await readyz(url);
    if (last.status === status) return last.body;
    await Bun.sleep(100);
  }
  throw new Error(`/readyz stayed ${last?.status}: ${JSON.stringify(last?.body)}`);
}

describe("a server with a SQLite ledger", () => {
  let server: RunningServer;
  const events: OpsEvent[] = [];
  beforeAll(async () => {
    server = await startServer(opsConfig(dir, { tables: FREE_TABLES }), { workers: 1 });
    server.events.subscribe((event) => void events.push(event));
  });
  afterAll(() => server?.stop());

  test("/healthz is up and checks nothing", async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  test("/readyz is ready: database, ledger, and no facilitator needed for free tables", async () => {
    expect(await readyz(server.url)).toEqual({ status: 200, body: { status: "ready", checks: { database: "ok", ledger: "ok", facilitator: "ok" } } });
  });

  test("a database file that is no longer a database is not ready, and ready again once restored", async () => {
    const path = join(dir, "types.sqlite");
    const original = readFileSync(path);
    writeFileSync(path, "this is not an SQLite database".repeat(200));
    try {
      const body = await readyzUntil(server.url, 503);
      expect(body.status).toBe("not ready");
      expect(body.checks.database).toContain("the database file does not open or answer");
      expect(body.checks.ledger).toBe("ok");
    } finally {
      writeFileSync(path, original);
    }
    expect((await readyzUntil(server.url, 200)).status).toBe("ready");
    const changes = events.filter((event) => event.type === "readiness.changed");
    expect(changes.map((event) => event.type === "readiness.changed" && event.ready)).toEqual([false, true]);
  });
});

test("while shutting down, the server is not ready", async () => {
  const store = await openPaymentStore({ path: join(dir, "drain-ledger.sqlite") });
  try {
    const readiness = createReadiness({
      sources: new Map([["main", new SqliteEngine(join(dir, "types.sqlite"), { maxRows: 10, queryTimeoutMs: 1000 }, 1)]]),
      store,
      facilitator: createFacilitatorClient({ url: "http://127.0.0.1:1", timeoutMs: 100 }),
      networks: [],
      draining: () => true,
    });
    const report = await readiness.check();
    expect(report.ready).toBe(false);
    expect(report.checks.server).toEqual({ ok: false, error: "shutting down" });
    expect(report.checks.database).toEqual({ ok: true });
  } finally {
    await store.close();
  }
});

test("a database file held by a writer is still ready (readers wait for it on workers)", async () => {
  const path = join(dir, "types.sqlite");
  const writer = new (await import("bun:sqlite")).Database(path, { readwrite: true });
  writer.run("BEGIN EXCLUSIVE");
  try {
    const store = await openPaymentStore({ path: join(dir, "busy-ledger.sqlite") });
    const report = await createReadiness({ sources: new Map([["main", new SqliteEngine(path, { maxRows: 10, queryTimeoutMs: 1000 }, 1)]]), store, facilitator: createFacilitatorClient({ url: "http://127.0.0.1:1", timeoutMs: 100 }), networks: [] }).check();
    await store.close();
    expect(report.checks.database).toEqual({ ok: true });
    // The check itself did fail to read: a plain read-only connection is refused while the lock is held.
    const reader = openReadOnly(path);
    expect(() => reader.query("SELECT count(*) FROM sqlite_schema").get()).toThrow();
    reader.close();
  } finally {
    writer.run("ROLLBACK");
    writer.close();
  }
});

describe("a server with a PostgreSQL ledger", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(opsConfig(dir, { tables: FREE_TABLES, ledger: { url: postgres.url } }), { workers: 1 });
  });
  afterAll(() => server?.stop());

  test("ready while PostgreSQL answers; 503 naming the ledger once it has stopped", async () => {
    expect((await readyz(server.url)).status).toBe(200);
    await postgres.server.stop();
    const started = Date.now();
    const body = await readyzUntil(server.url, 503);
    expect(body.checks).toEqual({ database: "ok", ledger: expect.stringContaining("the payment ledger did not answer"), facilitator: "ok" });
    // Bounded: the check gives up after its timeout rather than hanging the probe.
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);
});
