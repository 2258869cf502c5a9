/**
 * What only the SQLite store promises (the shared contract is in store-contract.test.ts): its
 * durability settings, records surviving a reopen, and ledger files written by earlier versions
 * opening with their rows kept.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openSqliteStore } from "../../src/payment/store/sqlite.ts";
import { tempDir } from "../support/fixtures.ts";
import { attempt, settle, settlement } from "./store-backends.ts";

const dir = tempDir("arrow402-sqlite-store-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `ledger-${++files}.sqlite`);

describe("durability", () => {
  test("WAL and synchronous=FULL on the connection that writes, also after a confirm and a claim renewed", async () => {
    const path = freshPath();
    const store = openSqliteStore(path, { claimLeaseMs: 150 });
    expect(store.durability()).toEqual({ journalMode: "wal", synchronous: 2 }); // 2 = FULL
    const paid = attempt();
    await store.begin(paid);
    // confirm and claims (taken, renewed every 50 ms here, released) commit without waiting for
    // fsync; every other write still does.
    await store.confirm(paid.paymentKey, settlement());
    const claim = await store.claim(attempt().paymentKey);
    await Bun.sleep(200);
    expect(store.durability()).toEqual({ journalMode: "wal", synchronous: 2 });
    expect(claim?.lost).toBe(false);
    await claim?.release();
    expect(store.durability()).toEqual({ journalMode: "wal", synchronous: 2 });
    // journal_mode is persistent in the file.
    const reader = new Database(path, { readonly: true });
    expect(reader.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    reader.close();
    await store.close();
  });

  test("settled and settling records survive closing and reopening, exactly", async () => {
    const path = freshPath();
    const store = openSqliteStore(path);
    const settled = attempt({ amount: 123_456_789_012_345_678_901_234_567_890n, query: null, rows: null });
    const pending = attempt();
    await settle(store, settled, new Date("2026-11-01T00:00:00.5Z"));
    await store.begin(pending);
    const before = [await store.find(settled.paymentKey), await store.find(pending.paymentKey)];
    await store.close();

    // The process stopped between asking the facilitator and hearing back: the attempt is still there.
    const reopened = openSqliteStore(path);
    expect([await reopened.find(settled.paymentKey), await reopened.find(pending.paymentKey)]).toEqual(before);
    expect((await reopened.unconfirmed()).map((r) => r.paymentKey)).toEqual([pending.paymentKey]);
    await reopened.confirm(pending.paymentKey, settlement({ rows: 3 }));
    await reopened.close();
    const again = openSqliteStore(path);
    expect(await again.unconfirmed()).toEqual([]);
    expect(await again.find(pending.paymentKey)).toMatchObject({ status: "settled", rows: 3 });
    await again.close();
  });

  test("the ledger's folder is created on first use", async () => {
    const path = join(dir, "state", "nested", "ledger.sqlite");
    const store = openSqliteStore(path);
    expect(existsSync(path)).toBe(true);
    await store.close();
  });
});

// The schemas earlier versions wrote, verbatim.
const OLDEST = `CREATE TABLE payments (
  id INTEGER PRIMARY KEY, settled_at TEXT NOT NULL, table_name TEXT NOT NULL, resource_url TEXT NOT NULL, query TEXT,
  rows INTEGER, amount TEXT NOT NULL, asset TEXT NOT NULL, network TEXT NOT NULL, payer TEXT NOT NULL, pay_to TEXT NOT NULL,
  tx_hash TEXT NOT NULL, payment_key TEXT NOT NULL UNIQUE, valid_before TEXT NOT NULL, signed_payload TEXT NOT NULL);
CREATE INDEX payments_settled_at ON payments (settled_at);`;
const WITH_ATTEMPTS = OLDEST.replace(
  "signed_payload TEXT NOT NULL)",
  "signed_payload TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'settled' CHECK (status IN ('settling', 'settled')))",
);

function oldLedger(schema: string, rows: { key: string; status?: "settling" }[]): string {
  const path = freshPath();
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run(schema);
  rows.forEach((row, i) => {
    const columns = row.status === undefined ? "" : ", status";
    const values = row.status === undefined ? "" : `, '${row.status}'`;
    db.run(
      `INSERT INTO payments (settled_at, table_name, resource_url, query, rows, amount, asset, network, payer, pay_to, tx_hash,
         payment_key, valid_before, signed_payload${columns})
       VALUES (?, 'swaps', 'http://x/api/table/swaps', NULL, NULL, ?, '0xA', 'eip155:84532', '0xP', '0xT', ?, ?, '99', '{}'${values})`,
      [`2025-01-0${i + 1}T00:00:00.000Z`, `${(i + 1) * 1000}`, row.status === undefined ? "0xtx" : "", row.key],
    );
  });
  db.close();
  return path;
}

describe("ledger files written by earlier versions", () => {
  test("the oldest (no status: every row settled) opens with its rows, which stay settled", async () => {
    const path = oldLedger(OLDEST, [{ key: "k1" }, { key: "k2" }]);
    const store = openSqliteStore(path);
    expect((await store.list()).map((r) => [r.paymentKey, r.status, r.amount, r.paymentId, r.transaction])).toEqual([
      ["k1", "settled", 1000n, null, "0xtx"],
      ["k2", "settled", 2000n, null, "0xtx"],
    ]);
    expect(await store.unconfirmed()).toEqual([]);
    // What is new works on the upgraded file: payment ids (unique), claims.
    const paid = attempt();
    await store.begin(paid);
    await expect(store.begin(attempt({ paymentId: paid.paymentId }))).rejects.toThrow(/already exists/);
    expect(await store.findByPaymentId(paid.paymentId!)).toMatchObject({ paymentKey: paid.paymentKey });
    expect(await store.claim("k1")).not.toBeNull();
    await store.close();
  });

  test("one with attempts but no payment id or claims keeps its settled and unconfirmed rows", async () => {
    const path = oldLedger(WITH_ATTEMPTS, [{ key: "k1" }, { key: "k2", status: "settling" }]);
    const store = openSqliteStore(path);
    expect((await store.list()).map((r) => r.paymentKey)).toEqual(["k1"]);
    expect((await store.unconfirmed()).map((r) => [r.paymentKey, r.status, r.transaction])).toEqual([["k2", "settling", ""]]);
    await store.confirm("k2", settlement());
    expect((await store.list()).map((r) => r.paymentKey)).toEqual(["k1", "k2"]);
    await store.close();
    // Opening an upgraded file again changes nothing.
    const reopened = openSqliteStore(path);
    expect(await reopened.list()).toHaveLength(2);
    await reopened.close();
  });

  test("processes opening the same old file at once upgrade it once, all successfully", async () => {
    const path = oldLedger(OLDEST, [{ key: "k1" }]);
    const open = join(import.meta.dir, "../../src/payment/store/sqlite.ts");
    const script = `
      const { openSqliteStore } = await import(${JSON.stringify(open)});
      const store = openSqliteStore(process.env.LEDGER_PATH);
      console.log((await store.list()).length);
      await store.close();
    `;
    const children = Array.from({ length: 4 }, () =>
      Bun.spawn(["bun", "-e", script], { env: { ...process.env, LEDGER_PATH: path }, stdout: "pipe", stderr: "pipe" }),
    );
    const results = await Promise.all(
      children.map(async (child) => ({ code: await child.exited, out: (await new Response(child.stdout).text()).trim(), err: await new Response(child.stderr).text() })),
    );
    expect(results).toEqual(children.map(() => ({ code: 0, out: "1", err: "" })));
    const db = new Database(path, { readonly: true });
    const columns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('payments')").all().map((c) => c.name);
    db.close();
    expect(columns.filter((name) => name === "status" || name === "payment_id")).toEqual(["status", "payment_id"]);
  });
});
