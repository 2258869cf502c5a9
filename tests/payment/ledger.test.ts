import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLedger, type LedgerEntry } from "../../src/payment/ledger.ts";
import { EIGHTEEN, OTHER_PAY_TO, PAY_TO, USDC_BASE_SEPOLIA } from "./fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "arrow402-ledger-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function entry(extra: Partial<LedgerEntry> = {}): LedgerEntry {
  counter += 1;
  const nonce = `0x${counter.toString(16).padStart(64, "0")}`;
  return {
    settledAt: new Date(Date.UTC(2025, 0, counter, 12)),
    tableName: "swaps",
    resourceUrl: `http://localhost:4021/api/query?query=SELECT+${counter}`,
    query: `SELECT ${counter}`,
    rows: counter * 10,
    amount: 4000n,
    asset: USDC_BASE_SEPOLIA.address,
    network: USDC_BASE_SEPOLIA.network,
    payer: OTHER_PAY_TO,
    payTo: PAY_TO,
    transaction: `0x${"ab".repeat(32)}`,
    paymentKey: `${USDC_BASE_SEPOLIA.network}|${USDC_BASE_SEPOLIA.address}|${OTHER_PAY_TO}|${nonce}`.toLowerCase(),
    validBefore: 2n ** 255n + BigInt(counter),
    signedPayload: JSON.stringify({ signature: "0x00", nonce }),
    ...extra,
  };
}

describe("ledger", () => {
  test("WAL and synchronous=FULL are set on the connection that writes", () => {
    const path = join(dir, "pragmas.sqlite");
    const ledger = openLedger(path);
    ledger.record(entry());
    // journal_mode is persistent in the file; synchronous is per connection, so read it from the ledger's own handle.
    const db = new Database(path, { readonly: true });
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    db.close();
    expect(ledger.durability()).toEqual({ journalMode: "wal", synchronous: 2 }); // 2 = FULL
    ledger.close();
  });

  test("a recorded payment survives closing and reopening, exactly", () => {
    const path = join(dir, "durable.sqlite");
    const first = entry({ amount: 123_456_789_012_345_678_901_234_567_890n, query: null, rows: null });
    const ledger = openLedger(path);
    ledger.record(first);
    ledger.close();

    const reopened = openLedger(path);
    expect(reopened.findByKey(first.paymentKey)).toEqual(first);
    expect(reopened.findByKey("eip155:1|0x|0x|0x")).toBeUndefined();
    reopened.close();
  });

  test("a payment key is recorded once", () => {
    const ledger = openLedger(join(dir, "unique.sqlite"));
    const once = entry();
    ledger.record(once);
    expect(() => ledger.record({ ...once, transaction: `0x${"cd".repeat(32)}` })).toThrow(/UNIQUE/);
    expect(ledger.list()).toHaveLength(1);
    ledger.close();
  });

  test("list and totals, with and without since, per table and token", () => {
    const ledger = openLedger(join(dir, "totals.sqlite"));
    const a = entry({ amount: 1000n });
    const b = entry({ amount: 2500n });
    const c = entry({ amount: 10n ** 18n, asset: EIGHTEEN.address, network: EIGHTEEN.network });
    const d = entry({ amount: 7n, tableName: "blocks" });
    for (const e of [d, b, a, c]) ledger.record(e);

    expect(ledger.list().map((e) => e.paymentKey)).toEqual([a, b, c, d].map((e) => e.paymentKey));
    expect(ledger.list({ since: b.settledAt }).map((e) => e.paymentKey)).toEqual([b, c, d].map((e) => e.paymentKey));
    expect(ledger.totals()).toEqual([
      { tableName: "blocks", network: d.network, asset: d.asset, payments: 1, amount: 7n },
      { tableName: "swaps", network: EIGHTEEN.network, asset: EIGHTEEN.address, payments: 1, amount: 10n ** 18n },
      { tableName: "swaps", network: a.network, asset: a.asset, payments: 2, amount: 3500n },
    ]);
    expect(ledger.totals({ since: c.settledAt }).map((t) => t.amount)).toEqual([7n, 10n ** 18n]);

    ledger.close();
  });
});

describe("settlement attempts", () => {
  test("an attempt is unconfirmed until confirmed, survives reopening, and is never counted as settled", () => {
    const path = join(dir, "attempts.sqlite");
    const ledger = openLedger(path);
    const { transaction: _t, settledAt: _s, ...rest } = entry();
    expect(ledger.begin({ ...rest, rows: null, attemptedAt: new Date("2026-11-01T00:00:00Z") })).toBe("new");
    expect(ledger.findByKey(rest.paymentKey)).toBeUndefined();
    expect(ledger.list()).toEqual([]);
    ledger.close();
    // The process stopped between asking the facilitator and hearing back: the attempt is still there.
    const reopened = openLedger(path);
    expect(reopened.unconfirmed().map((e) => e.paymentKey)).toEqual([rest.paymentKey]);
    reopened.confirm(rest.paymentKey, { transaction: `0x${"cd".repeat(32)}`, payer: rest.payer, settledAt: new Date("2026-11-01T00:00:01Z"), rows: 12 });
    expect(reopened.unconfirmed()).toEqual([]);
    // The confirmation carries the rows delivered (a fixed-price attempt is begun before its query ran).
    expect(reopened.findByKey(rest.paymentKey)).toMatchObject({ transaction: `0x${"cd".repeat(32)}`, rows: 12 });
    // It is committed without waiting for fsync; every other write still does (synchronous=FULL).
    expect(reopened.durability()).toEqual({ journalMode: "wal", synchronous: 2 });
    // A settled key cannot be attempted again.
    expect(() => reopened.begin({ ...rest, attemptedAt: new Date() })).toThrow();
    reopened.close();
  });

  test("a second attempt of a payment whose first attempt is unconfirmed is 'resumed', and updates that row", () => {
    const ledger = openLedger(join(dir, "resumed.sqlite"));
    const { transaction: _t, settledAt: _s, ...rest } = entry();
    expect(ledger.begin({ ...rest, attemptedAt: new Date("2026-11-01T00:00:00Z") })).toBe("new");
    expect(ledger.begin({ ...rest, attemptedAt: new Date("2026-11-02T00:00:00Z") })).toBe("resumed");
    expect(ledger.unconfirmed().map((e) => e.settledAt.toISOString())).toEqual(["2026-11-02T00:00:00.000Z"]);
    ledger.close();
  });

  test("a confirmation survives closing and reopening the ledger", () => {
    const path = join(dir, "confirmed.sqlite");
    const ledger = openLedger(path);
    const { transaction: _t, settledAt: _s, ...rest } = entry();
    ledger.begin({ ...rest, attemptedAt: new Date() });
    ledger.confirm(rest.paymentKey, { transaction: `0x${"ef".repeat(32)}`, payer: rest.payer, settledAt: new Date(), rows: 3 });
    ledger.close();
    const reopened = openLedger(path);
    expect(reopened.unconfirmed()).toEqual([]);
    expect(reopened.findByKey(rest.paymentKey)).toMatchObject({ transaction: `0x${"ef".repeat(32)}`, rows: 3 });
    reopened.close();
  });

  test("an abandoned attempt leaves nothing behind", () => {
    const ledger = openLedger(join(dir, "abandoned.sqlite"));
    const { transaction: _t, settledAt: _s, ...rest } = entry();
    ledger.begin({ ...rest, attemptedAt: new Date() });
    ledger.abandon(rest.paymentKey);
    expect(ledger.unconfirmed()).toEqual([]);
    expect(ledger.list()).toEqual([]);
    ledger.close();
  });
});
