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
/** A lease short enough to watch several of them pass in a test (the default is CLAIM_LEASE_MS, 5 s). */
const SHORT_LEASE = 1_200;

describe.each(backends.map((backend) => [backend.name, backend] as const))("%s store", (_name, backend) => {
  describe("claims: leases renewed while held", () => {
    test("one holder per payment key; other keys are independent; release frees it at once", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const key = attempt().paymentKey;
      const first = await store.claim(key);
      expect(first).not.toBeNull();
      expect(await store.claim(key)).toBeNull();
      expect(await store.claim(attempt().paymentKey)).not.toBeNull();
      await first!.release();
      expect(await store.claim(key)).not.toBeNull();
    });

    test("exclusive between two handles on the same state (two replicas)", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const key = attempt().paymentKey;
      const held = await one.claim(key);
      expect(held).not.toBeNull();
      expect(await two.claim(key)).toBeNull();
      await held!.release();
      const taken = await two.claim(key);
      expect(taken).not.toBeNull();
      expect(await one.claim(key)).toBeNull();
      await taken!.release();
    });

    test("many concurrent claims of one key from two handles: exactly one wins", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open(), await open()];
      const key = attempt().paymentKey;
      const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).claim(key)));
      expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    });

    test("a claim renewed by its holder is kept past several leases, from every handle; released, it is free at once", async () => {
      const { open } = await backend.fresh();
      const [one, two] = [await open({ claimLeaseMs: SHORT_LEASE }), await open({ claimLeaseMs: SHORT_LEASE })];
      const key = attempt().paymentKey;
      const held = await one.claim(key);
      expect(held).not.toBeNull();
      const until = Date.now() + 3 * SHORT_LEASE;
      let tries = 0;
      while (Date.now() < until) {
        expect(await two.claim(key)).toBeNull();
        expect(await one.claim(key)).toBeNull();
        tries += 1;
        await Bun.sleep(SHORT_LEASE / 4);
      }
      expect(tries).toBeGreaterThanOrEqual(6);
      expect(held!.lost).toBe(false);
      await held!.release();
      expect(await two.claim(key)).not.toBeNull();
    }, 20_000);

    test("a stalled holder (SIGSTOP): its lease runs out and exactly one taker gets the key; resumed, it finds its claim lost, cannot abandon the attempt, and its release leaves the new claim", async () => {
      const { ledger, open } = await backend.fresh();
      const [one, two] = [await open({ claimLeaseMs: SHORT_LEASE }), await open({ claimLeaseMs: SHORT_LEASE })];
      const paid = attempt();
      const key = paid.paymentKey;
      const holder = await holdInSubprocess(ledger, key, SHORT_LEASE);
      try {
        await one.begin(paid);
        expect(await one.claim(key)).toBeNull();
        holder.child.kill("SIGSTOP");
        await Bun.sleep(SHORT_LEASE + 300);
        const takers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? one : two).claim(key)));
        const current = takers.filter((claim) => claim !== null);
        expect(current).toHaveLength(1);
        holder.child.kill("SIGCONT");
        // Its next renewal finds the key taken over; it then tries to abandon the attempt and releases.
        expect(await holder.line()).toBe("lost; abandoned: false");
        expect((await two.find(key))?.status).toBe("settling");
        // The new holder keeps it (renewed) past two more leases.
        await Bun.sleep(2 * SHORT_LEASE);
        expect(current[0]!.lost).toBe(false);
        expect(await one.claim(key)).toBeNull();
        expect(await two.claim(key)).toBeNull();
        expect(await two.abandon(key, current[0]!)).toBe(true);
        expect(await two.find(key)).toBeUndefined();
        await current[0]!.release();
        await current[0]!.release();
        expect(await one.claim(key)).not.toBeNull();
      } finally {
        holder.child.kill("SIGKILL");
        await holder.child.exited;
      }
    }, 20_000);

    test("a holder killed with SIGKILL after holding the key for several leases: the key is free within one lease of its death, not before", async () => {
      const { ledger, open } = await backend.fresh();
      const store = await open();
      const key = attempt().paymentKey;
      const lease = SHORT_LEASE;
      const holder = await holdInSubprocess(ledger, key, lease);
      // Alive, the other process keeps the key past its lease.
      await Bun.sleep(3 * lease);
      expect(await store.claim(key)).toBeNull();
      holder.child.kill("SIGKILL");
      await holder.child.exited;
      const killedAt = Date.now();
      expect(await store.claim(key)).toBeNull();
      let claim = null;
      while (claim === null && Date.now() - killedAt < 10 * lease) {
        await Bun.sleep(50);
        claim = await store.claim(key);
      }
      expect(claim).not.toBeNull();
      expect(Date.now() - killedAt).toBeLessThan(lease + 1_000);
    }, 20_000);
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

    test("abandon deletes a settling attempt (which may then begin again), only for the holder of its claim, and never a settled record", async () => {
      const { open } = await backend.fresh();
      const store = await open();
      const dropped = attempt();
      await store.begin(dropped);
      const claim = (await store.claim(dropped.paymentKey))!;
      // Another key's claim, or a released one, does not hold this payment.
      const other = (await store.claim(attempt().paymentKey))!;
      expect(await store.abandon(dropped.paymentKey, other)).toBe(false);
      expect((await store.find(dropped.paymentKey))?.status).toBe("settling");
      expect(await store.abandon(dropped.paymentKey, claim)).toBe(true);
      expect(await store.find(dropped.paymentKey)).toBeUndefined();
      expect(await store.findByPaymentId(dropped.paymentId!)).toBeUndefined();
      expect(await store.unconfirmed()).toEqual([]);
      expect(await store.abandon(dropped.paymentKey, claim)).toBe(false);
      await store.begin(dropped);
      expect((await store.find(dropped.paymentKey))?.status).toBe("settling");
      await claim.release();
      expect(await store.abandon(dropped.paymentKey, claim)).toBe(false);
      expect((await store.find(dropped.paymentKey))?.status).toBe("settling");

      const kept = attempt();
      await settle(store, kept, new Date("2026-11-01T00:00:00Z"));
      const keptClaim = (await store.claim(kept.paymentKey))!;
      expect(await store.abandon(kept.paymentKey, keptClaim)).toBe(false);
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

/**
 * A separate process that opens the store (its own handle and lease timer), claims `key`, says so,
 * and keeps renewing it; once a renewal finds the claim lost it tries to abandon the attempt,
 * releases, says what happened, and waits to be killed.
 */
async function holdInSubprocess(ledger: LedgerConfig, key: string, leaseMs: number) {
  const open = join(import.meta.dir, "../../src/payment/store/open.ts");
  const script = `
    const { openPaymentStore } = await import(${JSON.stringify(open)});
    const store = await openPaymentStore(JSON.parse(process.env.LEDGER), { claimLeaseMs: Number(process.env.LEASE) });
    const claim = await store.claim(process.env.KEY);
    console.log(claim === null ? "refused" : "claimed");
    if (claim !== null) {
      while (!claim.lost) await Bun.sleep(10);
      const abandoned = await store.abandon(process.env.KEY, claim);
      await claim.release();
      console.log("lost; abandoned: " + abandoned);
    }
    await Bun.sleep(60_000);
  `;
  const child = Bun.spawn(["bun", "-e", script], {
    env: { ...process.env, LEDGER: JSON.stringify(ledger), KEY: key, LEASE: String(leaseMs) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  /** The next line the process prints ("" once it has ended). */
  const line = async (): Promise<string> => {
    while (!buffered.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) return buffered;
      buffered += decoder.decode(value, { stream: true });
    }
    const end = buffered.indexOf("\n");
    const first = buffered.slice(0, end);
    buffered = buffered.slice(end + 1);
    return first;
  };
  const said = await line();
  if (said !== "claimed") {
    child.kill("SIGKILL");
    throw new Error(`the subprocess did not claim the key (it said '${said}')`);
  }
  return { child, line };
}
