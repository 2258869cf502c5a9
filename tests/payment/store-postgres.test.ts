/**
 * What only the PostgreSQL store promises (the shared contract is in store-contract.test.ts): no
 * password in any message, failures as errors, a schema created once by replicas starting
 * together, exact column types; and that the test server itself cannot outlive its test process.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { openPaymentStore } from "../../src/payment/store/open.ts";
import { startPostgres, usePostgres } from "../support/postgres.ts";
import { attempt, settlement } from "./store-backends.ts";

const postgres = usePostgres();
const PASSWORD = "s3cret-Pa55";

/** The test server trusts loopback, so a URL with a password connects, and the password can be looked for. */
function withPassword(url: string, extra = ""): string {
  const parsed = new URL(url);
  parsed.username = "postgres";
  parsed.password = PASSWORD;
  return parsed.toString() + extra;
}

async function closedPort(): Promise<number> {
  return await new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("location and failures", () => {
  test("location is the URL without its password or parameters", async () => {
    const url = withPassword(await postgres.server.createDatabase(), `?sslmode=disable&application_name=${PASSWORD}`);
    const store = await openPaymentStore({ url });
    const port = new URL(url).port;
    expect(store.location).toBe(`postgres://postgres@127.0.0.1:${port}/${new URL(url).pathname.slice(1)}`);
    await store.ping();
    await store.close();
  });

  test("an unreachable server: opening rejects, naming the location and what to check, without the password", async () => {
    const url = `postgres://arrow402:${PASSWORD}@127.0.0.1:${await closedPort()}/arrow402`;
    const error = await openPaymentStore({ url }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toStartWith(`cannot open the payment ledger at postgres://arrow402@127.0.0.1:${new URL(url).port}/arrow402: `);
    expect(error!.message).toContain("check ledger.url");
    expect(error!.message).not.toContain(PASSWORD);
  });

  test("a server that goes away: every call rejects (nothing is pretended), without the password", async () => {
    const server = await startPostgres();
    try {
      const url = withPassword(await server.createDatabase());
      const store = await openPaymentStore({ url });
      const paid = attempt();
      await store.begin(paid);
      await server.stop();
      const calls: [string, Promise<unknown>][] = [
        ["ping", store.ping()],
        ["claim", store.claim(paid.paymentKey)],
        ["find", store.find(paid.paymentKey)],
        ["findByPaymentId", store.findByPaymentId(paid.paymentId!)],
        ["begin", store.begin(attempt())],
        ["confirm", store.confirm(paid.paymentKey, settlement())],
        ["abandon", store.abandon(paid.paymentKey, { holder: "a holder", lost: false, release: async () => {} })],
        ["list", store.list()],
        ["unconfirmed", store.unconfirmed()],
        ["totals", store.totals()],
      ];
      for (const [name, call] of calls) {
        const outcome = await call.then(
          () => `${name} resolved`,
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
        expect(outcome).not.toBe(`${name} resolved`);
        expect(outcome).not.toContain(PASSWORD);
      }
      await store.close();
    } finally {
      await server.stop();
    }
  });
});

describe("schema", () => {
  test("replicas starting together on an empty database all open it, and the schema is created once", async () => {
    const url = await postgres.server.createDatabase();
    const stores = await Promise.all(Array.from({ length: 8 }, () => openPaymentStore({ url })));
    const paid = attempt();
    await stores[0]!.begin(paid);
    expect((await stores[7]!.find(paid.paymentKey))?.status).toBe("settling");
    for (const store of stores) await store.close();
  });

  test("uint256 columns are NUMERIC(78,0), times timestamptz, claims unlogged", async () => {
    const url = await postgres.server.createDatabase();
    const store = await openPaymentStore({ url });
    await store.close();
    const sql = new SQL({ url, max: 1 });
    try {
      const columns = await sql`
        SELECT column_name, data_type, numeric_precision, numeric_scale FROM information_schema.columns
        WHERE table_name = 'arrow402_payments' AND column_name IN ('amount', 'valid_before', 'settled_at') ORDER BY column_name`;
      expect([...columns]).toEqual([
        { column_name: "amount", data_type: "numeric", numeric_precision: 78, numeric_scale: 0 },
        { column_name: "settled_at", data_type: "timestamp with time zone", numeric_precision: null, numeric_scale: null },
        { column_name: "valid_before", data_type: "numeric", numeric_precision: 78, numeric_scale: 0 },
      ]);
      const [claims] = await sql`SELECT relpersistence FROM pg_class WHERE relname = 'arrow402_claims'`;
      expect(claims).toEqual({ relpersistence: "u" });
    } finally {
      await sql.close();
    }
  });

  test("the environment's PGDATABASE does not move the ledger to another database", async () => {
    const url = await postgres.server.createDatabase();
    const previous = process.env.PGDATABASE;
    process.env.PGDATABASE = "postgres";
    const paid = attempt();
    try {
      const store = await openPaymentStore({ url });
      await store.begin(paid);
      await store.close();
    } finally {
      if (previous === undefined) delete process.env.PGDATABASE;
      else process.env.PGDATABASE = previous;
    }
    const sql = new SQL({ url, database: new URL(url).pathname.slice(1), max: 1 });
    try {
      const [row] = await sql`SELECT count(*)::int AS n FROM arrow402_payments WHERE payment_key = ${paid.paymentKey}`;
      expect(row).toEqual({ n: 1 });
    } finally {
      await sql.close();
    }
  });
});

describe("the test server", () => {
  test("stops, and its folder is removed, when the test process is killed without running any handler", async () => {
    const support = join(import.meta.dir, "../support/postgres.ts");
    const script = `
      const { startPostgres } = await import(${JSON.stringify(support)});
      const server = await startPostgres();
      console.log(JSON.stringify({ pid: server.pid, url: server.url }));
      await Bun.sleep(60_000);
    `;
    const child = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    reader.releaseLock();
    const { pid, url } = JSON.parse(new TextDecoder().decode(value)) as { pid: number; url: string };
    const probe = new SQL({ url, max: 1 });
    const [{ dir }] = await probe`SELECT current_setting('data_directory') AS dir`;
    await probe.close();
    expect(isAlive(pid)).toBe(true);

    child.kill("SIGKILL");
    await child.exited;
    const deadline = Date.now() + 15_000;
    while ((isAlive(pid) || existsSync(dir)) && Date.now() < deadline) await Bun.sleep(100);
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
