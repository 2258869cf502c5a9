/**
 * The payment store contract (src/payment/store.ts), run against both stores: a SQLite file and a
 * real PostgreSQL server. Two handles on the same state (two `openPaymentStore` on one file, two
 * connection pools on one database) stand for two replicas; a killed subprocess for a dead one.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { LedgerConfig } from "../../src/config/types.ts";
import type { PaymentRecord } from "../../src/payment/store.ts";
import { attempt, settle, settlement, storeBackends } from "./store-backends.ts";
import { EIGHTEEN, USDC_BASE_SEPOLIA } from "./fixtures.ts";

const backends = storeBackends();
const MAX_UINT256 = 2n ** 256n - 1n;
const TTL = 60_000;

describe.each(backends.map((backend) => [backend.name, backend] as const))("%s store", (_name, backend) => {
  describe("claims", () => {
    test("one holder per payment key; other keys are independent; release frees it", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const key = attempt().paymentKey;
      const first = await store.claim(key, TTL);
      expect(first).not.toBeNull();
      expect(await store.claim(key, TTL)).toBeNull();
      expect(await store.claim(attempt().paymentKey, TTL)).not.toBeNull();
      await first!.release();
      expect(await store.claim(key, TTL)).not.toBeNull();
    });

    test("exclusive between two handles on the same state (two replicas)", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const key = attempt().paymentKey;
      const held = await one.claim(key, TTL);
      expect(held).not.toBeNull();
      expect(await two.claim(key, TTL)).toBeNull();
      await held!.release();
      const taken = await two.claim(key, TTL);
      expect(taken).not.toBeNull();
      expect(await one.claim(key, TTL)).toBeNull();
      await taken!.release();
    });

    test("many concurrent claims of one key from two handles: exactly one wins", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const key = attempt().paymentKey;
      const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).claim(key, TTL)));
      expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    });

    test("release is idempotent, and a stale release never frees a later holder's claim", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const key = attempt().paymentKey;
      // The first holder outlives its claim (a stalled request): another one takes the key over.
      const stale = await one.claim(key, 100);
      await Bun.sleep(250);
      const current = await two.claim(key, TTL);
      expect(stale).not.toBeNull();
      expect(current).not.toBeNull();
      await stale!.release();
      await stale!.release();
      expect(await one.claim(key, TTL)).toBeNull();
      await current!.release();
      await current!.release();
      expect(await one.claim(key, TTL)).not.toBeNull();
    });

    test("a holder killed with SIGKILL blocks the key until its claim expires, then not", async () => {
      const { ledger, open } = await backend.fresh();
      const store = await open();
      const key = attempt().paymentKey;
      const ttlMs = 2_000;
      const holder = await claimInSubprocess(ledger, key, ttlMs);
      holder.kill("SIGKILL");
      await holder.exited;
      const killedAt = Date.now();
      expect(await store.claim(key, TTL)).toBeNull();
      let claim = null;
      while (claim === null && Date.now() - killedAt < 15_000) {
        await Bun.sleep(100);
        claim = await store.claim(key, TTL);
      }
      expect(claim).not.toBeNull();
      expect(Date.now() - killedAt).toBeLessThan(15_000);
    });
  });

  describe("attempts: begin, confirm, abandon", () => {
    test("begin records a settling attempt: found, unconfirmed, not listed as settled", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const paid = attempt();
      await store.begin(paid);
      const { attemptedAt, ...fields } = paid;
      const expected: PaymentRecord = { ...fields, status: "settling", settledAt: attemptedAt, transaction: "", answer: null, replays: 0 };
      expect(await store.find(paid.paymentKey)).toEqual(expected);
      expect(await store.findByPaymentId(paid.paymentId!)).toEqual(expected);
      expect(await store.unconfirmed()).toEqual([expected]);
      expect(await store.list()).toEqual([]);
      expect(await store.totals()).toEqual([]);
    });

    test("confirm marks it settled with the facilitator's answer and the rows delivered", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const paid = attempt({ rows: null });
      await store.begin(paid);
      const answer = settlement({ rows: 12, settledAt: new Date("2026-11-01T00:00:01.234Z"), transaction: `0x${"cd".repeat(32)}`, answer: { digest: "ab".repeat(32), format: "csv" } });
      await store.confirm(paid.paymentKey, answer);
      const { attemptedAt: _a, ...fields } = paid;
      const expected: PaymentRecord = { ...fields, status: "settled", ...answer, replays: 0 };
      expect(await store.find(paid.paymentKey)).toEqual(expected);
      expect(await store.findByPaymentId(paid.paymentId!)).toEqual(expected);
      expect(await store.list()).toEqual([expected]);
      expect(await store.unconfirmed()).toEqual([]);
    });

    test("countReplay counts a settled payment's replays up to the maximum, and never a settling attempt's", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const paid = attempt();
      await store.begin(paid);
      expect(await store.countReplay(paid.paymentKey, 2)).toBe(false);
      await store.confirm(paid.paymentKey, settlement());
      const counted = await Promise.all([1, 2, 3].map(() => store.countReplay(paid.paymentKey, 2)));
      expect(counted.filter(Boolean)).toHaveLength(2);
      expect((await store.find(paid.paymentKey))?.replays).toBe(2);
      expect(await store.countReplay(paid.paymentKey, 3)).toBe(true);
      expect(await store.countReplay("no such key", 3)).toBe(false);
    });

    test("confirm refuses anything but a settling attempt", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const paid = attempt();
      await expect(store.confirm(paid.paymentKey, settlement())).rejects.toThrow(/no settlement attempt in progress/);
      await settle(store, paid, new Date("2026-11-01T00:00:00Z"));
      await expect(store.confirm(paid.paymentKey, settlement({ transaction: `0x${"ef".repeat(32)}` }))).rejects.toThrow(
        /no settlement attempt in progress/,
      );
      expect((await store.find(paid.paymentKey))?.transaction).toBe(settlement().transaction);
    });

    test("begin never overwrites a record: same key (settling or settled) or same payment id is refused", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const first = attempt();
      await store.begin(first);
      const before = await store.find(first.paymentKey);
      // A refused request presenting the same payment for another resource must not rewrite it.
      const sameKey = { ...first, resourceUrl: "http://localhost:4021/api/query?query=SELECT+other", paymentId: null, attemptedAt: new Date() };
      await expect(store.begin(sameKey)).rejects.toThrow(/already exists/);
      expect(await store.find(first.paymentKey)).toEqual(before);

      const sameId = attempt({ paymentId: first.paymentId });
      await expect(store.begin(sameId)).rejects.toThrow(/already exists/);
      expect(await store.find(sameId.paymentKey)).toBeUndefined();
      expect(await store.findByPaymentId(first.paymentId!)).toEqual(before);

      await store.confirm(first.paymentKey, settlement());
      await expect(store.begin({ ...first, attemptedAt: new Date() })).rejects.toThrow(/already exists/);
      expect((await store.find(first.paymentKey))?.status).toBe("settled");
    });

    test("payments without a payment id do not collide", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const [a, b] = [attempt({ paymentId: null }), attempt({ paymentId: null })];
      await store.begin(a);
      await store.begin(b);
      expect((await store.unconfirmed()).map((r) => [r.paymentKey, r.paymentId])).toEqual([
        [a.paymentKey, null],
        [b.paymentKey, null],
      ]);
    });

    test("a second handle's begin on the same key is refused too", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const paid = attempt();
      const results = await Promise.allSettled([one.begin(paid), two.begin({ ...paid, resourceUrl: `${paid.resourceUrl}+x` })]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await two.unconfirmed()).toHaveLength(1);
    });

    test("abandon deletes a settling attempt (which may then begin again) and never a settled record", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const dropped = attempt();
      await store.begin(dropped);
      await store.abandon(dropped.paymentKey);
      expect(await store.find(dropped.paymentKey)).toBeUndefined();
      expect(await store.findByPaymentId(dropped.paymentId!)).toBeUndefined();
      expect(await store.unconfirmed()).toEqual([]);
      await store.abandon(dropped.paymentKey);
      await store.begin(dropped);
      expect((await store.find(dropped.paymentKey))?.status).toBe("settling");

      const kept = attempt();
      await settle(store, kept, new Date("2026-11-01T00:00:00Z"));
      await store.abandon(kept.paymentKey);
      expect((await store.find(kept.paymentKey))?.status).toBe("settled");
      expect(await store.list()).toHaveLength(1);
    });

    test("find and findByPaymentId answer undefined for what was never recorded", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      expect(await store.find("eip155:1|0x|0x|0x")).toBeUndefined();
      expect(await store.findByPaymentId("pay_unknown")).toBeUndefined();
    });
  });

  describe("list, unconfirmed, totals", () => {
    test("oldest first, `since` inclusive, totals per table, network and asset sorted by table then network", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const at = (day: number) => new Date(Date.UTC(2026, 0, day, 12));
      const a = attempt({ amount: 1000n });
      const b = attempt({ amount: 2500n, asset: USDC_BASE_SEPOLIA.address.toLowerCase() });
      const c = attempt({ amount: 10n ** 18n, asset: EIGHTEEN.address, network: EIGHTEEN.network });
      const d = attempt({ amount: 7n, tableName: "blocks", query: null, rows: null });
      // Written in another order than their settlement times.
      await settle(store, d, at(4));
      await settle(store, b, at(2));
      await settle(store, a, at(1));
      await settle(store, c, at(3));
      const pending = [attempt({ attemptedAt: at(9) }), attempt({ attemptedAt: at(8) })];
      for (const p of pending) await store.begin(p);

      expect((await store.list()).map((r) => r.paymentKey)).toEqual([a, b, c, d].map((r) => r.paymentKey));
      expect((await store.list({ since: at(2) })).map((r) => r.paymentKey)).toEqual([b, c, d].map((r) => r.paymentKey));
      expect(await store.list({ since: at(5) })).toEqual([]);
      expect((await store.unconfirmed()).map((r) => r.paymentKey)).toEqual([pending[1]!.paymentKey, pending[0]!.paymentKey]);

      // A checksummed and a lower-case spelling of one asset are one token, shown in its smallest spelling.
      expect(await store.totals()).toEqual([
        { tableName: "blocks", network: d.network, asset: d.asset, payments: 1, amount: 7n },
        { tableName: "swaps", network: EIGHTEEN.network, asset: EIGHTEEN.address, payments: 1, amount: 10n ** 18n },
        { tableName: "swaps", network: a.network, asset: a.asset, payments: 2, amount: 3500n },
      ]);
      expect((await store.totals({ since: at(3) })).map((t) => [t.tableName, t.amount])).toEqual([
        ["blocks", 7n],
        ["swaps", 10n ** 18n],
      ]);
    });

    test("uint256 amounts and validBefore exactly, dates to the millisecond, null query and rows", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const settledAt = new Date("2026-11-01T12:34:56.789Z");
      const big = attempt({ amount: MAX_UINT256, validBefore: MAX_UINT256, query: null, rows: null, attemptedAt: new Date("2026-10-31T23:59:59.001Z") });
      const other = attempt({ amount: MAX_UINT256, validBefore: 0n });
      await store.begin(big);
      expect(await store.find(big.paymentKey)).toMatchObject({ amount: MAX_UINT256, validBefore: MAX_UINT256, settledAt: big.attemptedAt });
      await store.confirm(big.paymentKey, settlement({ settledAt, rows: null }));
      await settle(store, other, settledAt);

      const [first, second] = await store.list();
      expect(first).toMatchObject({ amount: MAX_UINT256, validBefore: MAX_UINT256, query: null, rows: null });
      expect(first!.settledAt.toISOString()).toBe("2026-11-01T12:34:56.789Z");
      expect(second).toMatchObject({ amount: MAX_UINT256, validBefore: 0n });
      // The total of two exceeds uint256: still exact.
      expect((await store.totals())[0]?.amount).toBe(2n * MAX_UINT256);
      expect((await store.list({ since: new Date("2026-11-01T12:34:56.789Z") })).length).toBe(2);
      expect((await store.list({ since: new Date("2026-11-01T12:34:56.790Z") })).length).toBe(0);
    });

    test("what one handle writes, another reads", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const paid = attempt();
      await settle(one, paid, new Date("2026-11-01T00:00:00Z"));
      expect((await two.find(paid.paymentKey))?.status).toBe("settled");
      expect(await two.list()).toHaveLength(1);
    });
  });

  describe("ping and close", () => {
    test("ping answers while open; close is idempotent and ends the handle", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      await store.ping();
      expect(store.location).toBeTruthy();
      await store.close();
      await store.close();
      await expect(store.ping()).rejects.toThrow();
    });
  });
});

/** A separate process that opens the store, claims `key`, says so, and then waits to be killed. */
async function claimInSubprocess(ledger: LedgerConfig, key: string, ttlMs: number): Promise<Bun.Subprocess<"ignore", "pipe", "inherit">> {
  const open = join(import.meta.dir, "../../src/payment/store/open.ts");
  const script = `
    const { openPaymentStore } = await import(${JSON.stringify(open)});
    const store = await openPaymentStore(JSON.parse(process.env.LEDGER));
    const claim = await store.claim(process.env.KEY, Number(process.env.TTL));
    console.log(claim === null ? "refused" : "claimed");
    await Bun.sleep(60_000);
  `;
  const child = Bun.spawn(["bun", "-e", script], {
    env: { ...process.env, LEDGER: JSON.stringify(ledger), KEY: key, TTL: String(ttlMs) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  const said = new TextDecoder().decode(value ?? new Uint8Array()).trim();
  if (said !== "claimed") {
    child.kill("SIGKILL");
    throw new Error(`the subprocess did not claim the key (it said '${said}')`);
  }
  return child;
}
