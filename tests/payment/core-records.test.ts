/**
 * A payment presented when the store already knows it (ARCHITECTURE.md §6 "Replay and races",
 * "Crashes"), and the one-request-per-payment claim, against the devnet.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createPublicClient, http } from "viem";
import { BadRequestError, PaidQueryFailedError, PaymentIdConflictError } from "../../src/errors.ts";
import { createAuthorizationChecker } from "../../src/payment/authorization-check.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { reconcileAttempts } from "../../src/payment/reconcile.ts";
import type { Claim } from "../../src/payment/store.ts";
import { openSqliteStore } from "../../src/payment/store/sqlite.ts";
import { tempDir } from "../support/fixtures.ts";
import { PAYMENT_IDENTIFIER, paymentKey } from "../../src/payment/payload.ts";
import type { PriceTag } from "../../src/config/types.ts";
import type { PaymentCore } from "../../src/payment/core.ts";
import { copy, expect402, expectPaid, fixedTags, perRowTags, queryWork, signFirst, useHarness, type Harness } from "./core-harness.ts";
import { deployCodeAt } from "./devnet-token.ts";

const h = useHarness();

/** A transaction's receipt on the devnet, with its block's time in milliseconds. */
async function minedTransaction(hash: string) {
  const chain = createPublicClient({ transport: http(h.devnet.rpcUrl) });
  const receipt = await chain.getTransactionReceipt({ hash: hash as `0x${string}` });
  const block = await chain.getBlock({ blockNumber: receipt.blockNumber });
  return { ...receipt, blockMs: Number(block.timestamp) * 1000 };
}

/** A fixed-price payment settled for `SELECT … WHERE id <= maxId`. */
async function settledFixed(harness: Harness, maxId = 6) {
  const { body } = expect402(await harness.core.process(queryWork(maxId, fixedTags(harness), null, harness).work));
  const signed = await signFirst(harness, body);
  const paid = expectPaid(await harness.core.process(queryWork(maxId, fixedTags(harness), signed.payload, harness).work));
  harness.proxy.resetCounts();
  return { ...signed, receipt: paid.receipt };
}

describe("one request per payment", () => {
  test("concurrent duplicates: one is processed, the others get 402 at once without any work; exactly one settlement", async () => {
    const { body } = expect402(await h.core.process(queryWork(10, perRowTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    h.proxy.resetCounts();
    const attempts = Array.from({ length: 5 }, () => queryWork(10, perRowTags(h), payload, h));
    const outcomes = await Promise.all(attempts.map(({ work }) => h.core.process(work)));
    expect(outcomes.filter((o) => o.kind === "paid")).toHaveLength(1);
    const refused = outcomes.filter((o) => o.kind === "payment-required");
    expect(refused).toHaveLength(4);
    for (const outcome of refused) expect(expect402(outcome).body.error).toBe(PAYMENT_MESSAGES.inUse);
    expect(attempts.reduce((sum, { calls }) => sum + calls.count + calls.run, 0)).toBe(2);
    expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
    expect(await h.store.list()).toHaveLength(1);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 1000n);
  });
});

describe("a claim that ran out while its request worked", () => {
  test("the process stalls past the lease while /verify runs and another process takes the payment over: 402 in use, nothing sent to /settle, the attempt left to the new holder, the loss reported; presented again later, it is settled once", async () => {
    // Two processes sharing one ledger file, with a lease short enough to stall past.
    const path = join(tempDir("arrow402-lease-"), "ledger.sqlite");
    const [stalled, other] = [openSqliteStore(path, { claimLeaseMs: 300 }), openSqliteStore(path, { claimLeaseMs: 300 })];
    const core = h.newCore({ store: stalled });
    try {
      const { body } = expect402(await core.process(queryWork(9, fixedTags(h), null, h).work));
      const { payload, payer } = await signFirst(h, body);
      const key = paymentKey(payload);
      let takenOver: Claim | null = null;
      h.proxy.setBehaviour({
        verify: {
          kind: "hook",
          async before() {
            // The whole process stalls (nothing renews), then the other process takes the payment
            // over and this one's next renewal finds it gone.
            Bun.sleepSync(600);
            takenOver = await other.claim(key);
            await Bun.sleep(250);
          },
        },
      });
      const { work, calls } = queryWork(9, fixedTags(h), payload, h);
      const outcome = await core.process(work);
      h.proxy.setBehaviour({});
      expect(takenOver).not.toBeNull();
      expect(expect402(outcome).body.error).toBe(PAYMENT_MESSAGES.inUse);
      expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
      expect(calls.run).toBe(1);
      expect(await other.find(key)).toMatchObject({ status: "settling", rows: null });
      expect(h.events).toContainEqual({ type: "payment.claim-lost", table: "swaps", paymentKey: key });
      expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n);
      // The new holder still holds it (renewed); once it lets go, the same payment is settled, once.
      await Bun.sleep(600);
      expect(await stalled.claim(key)).toBeNull();
      await takenOver!.release();
      h.proxy.resetCounts();
      const { receipt } = expectPaid(await core.process(queryWork(9, fixedTags(h), payload, h).work));
      expect(h.proxy.counts).toMatchObject({ settle: 1 });
      expect(await other.list()).toEqual([expect.objectContaining({ transaction: receipt.transaction, rows: 9 })]);
      expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 7000n);
    } finally {
      h.proxy.setBehaviour({});
      await stalled.close();
      await other.close();
    }
  }, 20_000);
});

describe("a settled payment presented again", () => {
  test("for the same resource: served again with the same receipt, no new charge, no facilitator call", async () => {
    const { payload, payer, receipt } = await settledFixed(h, 8);
    const { work, calls } = queryWork(8, fixedTags(h), payload, h);
    expect(expectPaid(await h.core.process(work)).receipt).toEqual(receipt);
    expect(calls.run).toBe(1);
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.list()).toHaveLength(1);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 7000n);
    expect(h.events.at(-1)).toMatchObject({ type: "payment.settled", via: "replay" });
  });

  test("for another resource, with another signature, or later than maxTimeoutSeconds after settlement: 402, nothing run", async () => {
    const { payload } = await settledFixed(h, 6);
    const other = queryWork(7, fixedTags(h), payload, h);
    expect(expect402(await h.core.process(other.work)).body.error).toBe(PAYMENT_MESSAGES.otherResource);

    const forged = copy(payload);
    forged.payload.signature = `0x${"11".repeat(65)}`;
    expect(expect402(await h.core.process(queryWork(6, fixedTags(h), forged, h).work)).body.error).toBe(PAYMENT_MESSAGES.nonceUsed);

    h.clock = Date.now() + 301_000;
    const late = queryWork(6, fixedTags(h), payload, h);
    expect(expect402(await h.core.process(late.work)).body.error).toBe(PAYMENT_MESSAGES.replayExpired(300));
    expect([other.calls.run, late.calls.run]).toEqual([0, 0]);
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.list()).toHaveLength(1);
  });

  test("only with the answer it bought: the data changed, 402 with the current offers; the same data again, served", async () => {
    const { body } = expect402(await h.core.process(queryWork(30, perRowTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    expectPaid(await h.core.process(queryWork(30, perRowTags(h), payload, h).work));
    h.data.run("DELETE FROM swaps WHERE id = 30");
    try {
      const refused = expect402(await h.core.process(queryWork(30, perRowTags(h), payload, h).work));
      expect(refused.body.error).toBe(PAYMENT_MESSAGES.replayChanged);
      expect(refused.body.accepts.map((a) => a.amount)).toEqual(["2900"]);
    } finally {
      h.data.run("INSERT INTO swaps (id, amount_usd) VALUES (30, 45)");
    }
    expectPaid(await h.core.process(queryWork(30, perRowTags(h), payload, h).work));
    expect(await h.store.list()).toHaveLength(1);
  });
});

describe("a settled payment presented again, bounded (DESIGN.md §17)", () => {
  test("served again at most maxReplays times (3); then 402, nothing run, however often it comes", async () => {
    const { payload } = await settledFixed(h, 5);
    for (let i = 0; i < 3; i++) expectPaid(await h.core.process(queryWork(5, fixedTags(h), payload, h).work));
    for (let i = 0; i < 2; i++) {
      const { work, calls } = queryWork(5, fixedTags(h), payload, h);
      expect(expect402(await h.core.process(work)).body.error).toBe(PAYMENT_MESSAGES.replaysExhausted(3));
      expect(calls.run).toBe(0);
    }
    expect((await h.store.list()).map((record) => record.replays)).toEqual([3]);
    expect(h.proxy.requests).toEqual([]);
  });

  test("only in the form it was delivered in: another format is a 402 naming it, nothing run, not counted", async () => {
    const { payload } = await settledFixed(h, 4);
    const { work, calls } = queryWork(4, fixedTags(h), payload, h);
    expect(expect402(await h.core.process({ ...work, format: "csv" })).body.error).toBe(PAYMENT_MESSAGES.replayFormat("arrow"));
    expect(calls.run).toBe(0);
    expect((await h.store.list()).map((record) => record.replays)).toEqual([0]);
  });

  test("a read again that fails (the one text of a failure after /verify) says the payment was settled, not that nothing was charged", async () => {
    const { payload, receipt } = await settledFixed(h, 2);
    const { work } = queryWork(2, fixedTags(h), payload, h);
    const failed = h.core.process({ ...work, execute: () => Promise.reject(new PaidQueryFailedError(1000)) });
    await expect(failed).rejects.toThrow(PAYMENT_MESSAGES.replayFailed(receipt.transaction, 300));
  });

  test("the answer recorded at settlement is the one compared: the digest of what was delivered", async () => {
    const { payload } = await settledFixed(h, 3);
    const [record] = await h.store.list();
    const { work } = queryWork(3, fixedTags(h), null, h);
    expect(record!.answer).toEqual((await work.execute()).answer);
  });
});

describe("payment-identifier", () => {
  const withId = (payload: any, id: string) => ({ ...copy(payload), extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id } } } });

  test("the same id with the same payload is served again; with another payload it is a conflict (409)", async () => {
    const { body } = expect402(await h.core.process(queryWork(4, fixedTags(h), null, h).work));
    const first = await signFirst(h, body);
    const id = "pay_0123456789abcdef0123";
    expectPaid(await h.core.process(queryWork(4, fixedTags(h), withId(first.payload, id), h).work));
    expectPaid(await h.core.process(queryWork(4, fixedTags(h), withId(first.payload, id), h).work));
    const second = await signFirst(h, body);
    const { work, calls } = queryWork(4, fixedTags(h), withId(second.payload, id), h);
    await expect(h.core.process(work)).rejects.toBeInstanceOf(PaymentIdConflictError);
    expect(calls).toEqual({ count: 0, run: 0 });
    expect(await h.store.list()).toHaveLength(1);
    expect(await h.devnet.balanceOf(second.payer.account.address)).toBe(1_000_000n);
  });

  test("a malformed id is a 400", async () => {
    const { body } = expect402(await h.core.process(queryWork(4, fixedTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    await expect(h.core.process(queryWork(4, fixedTags(h), withId(payload, "short"), h).work)).rejects.toThrow("16 to 128");
  });
});

describe("a settlement whose answer was lost", () => {
  /** /settle answers after our client gave up: the transfer happens, we never hear of it. */
  async function lostAnswer(maxId: number) {
    const impatient = h.newCore({ facilitatorTimeoutMs: 300 });
    const { body } = expect402(await impatient.process(queryWork(maxId, fixedTags(h), null, h).work));
    const signed = await signFirst(h, body);
    h.proxy.setBehaviour({ settle: { kind: "hook", before: () => Bun.sleep(600) } });
    await expect(impatient.process(queryWork(maxId, fixedTags(h), signed.payload, h).work)).rejects.toThrow();
    for (let i = 0; i < 50 && (await h.devnet.balanceOf(signed.payer.account.address)) === 1_000_000n; i++) await Bun.sleep(100);
    expect(await h.devnet.balanceOf(signed.payer.account.address)).toBe(1_000_000n - 7000n);
    h.proxy.setBehaviour({});
    h.proxy.resetCounts();
    expect(await h.store.unconfirmed()).toHaveLength(1);
    return signed;
  }

  test("presented again: the chain shows the transfer, the attempt becomes settled, the buyer gets the data; no second transfer", async () => {
    const { payload, payer } = await lostAnswer(4);
    const { work, calls } = queryWork(4, fixedTags(h), payload, h);
    const { receipt } = expectPaid(await h.core.process(work));
    const transaction = receipt.transaction;
    expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(receipt).toEqual({ success: true, network: h.devnet.network, transaction, payer: payer.account.address });
    expect(calls.run).toBe(1);
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.store.list()).toEqual([expect.objectContaining({ transaction, rows: 4, amount: 7000n })]);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 7000n);
    // The hash found in the token's AuthorizationUsed log is the transfer that happened.
    const mined = await minedTransaction(transaction);
    expect(mined.status).toBe("success");
    // Dated by its block, as the replay window counts from the settlement.
    expect((await h.store.list())[0]!.settledAt.getTime()).toBe(mined.blockMs);
    expect(mined.logs.some((log) => log.address.toLowerCase() === h.devnet.token.address.toLowerCase())).toBe(true);
    expect(h.events.at(-1)).toMatchObject({ type: "payment.settled", via: "recovery" });
  }, 15_000);

  test("presented for another resource: 402, and the attempt's record is unchanged", async () => {
    const { payload } = await lostAnswer(3);
    const before = await h.store.unconfirmed();
    const { work, calls } = queryWork(2, fixedTags(h), payload, h);
    expect(expect402(await h.core.process(work)).body.error).toBe(PAYMENT_MESSAGES.pendingElsewhere);
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual(before);
  }, 15_000);

  test("without an RPC endpoint for the chain, the attempt is kept when the facilitator refuses the used nonce", async () => {
    const { payload, payer } = await lostAnswer(5);
    const blind = h.newCore({ rpc: false });
    expect(expect402(await blind.process(queryWork(5, fixedTags(h), payload, h).work)).body.error).toMatch(/^The payment was not verified/);
    expect((await h.store.unconfirmed()).map((e) => e.payer)).toEqual([payer.account.address]);
  }, 15_000);
});

describe("a payment whose nonce the payer spends elsewhere while it settles", () => {
  // EIP-3009 marks a nonce used when it is cancelled, or used by another authorization the payer
  // signs with it: neither pays this payment, though `authorizationState` reads true for both.
  const HOW = ["transfer", "cancel"] as const;

  test.each(HOW)("%s: the settlement fails, the attempt is removed, and presenting the payment again buys nothing", async (how) => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    const nonce = payload.payload.authorization.nonce as `0x${string}`;
    h.proxy.setBehaviour({ settle: { kind: "hook", before: () => h.devnet.spendNonce(payer.privateKey, nonce, how) } });
    expect(expect402(await h.core.process(queryWork(5, fixedTags(h), payload, h).work)).body.error).toMatch(/^The payment was verified but could not be settled \(invalid_exact_evm_nonce_already_used\)/);
    h.proxy.setBehaviour({});
    expect(await h.store.unconfirmed()).toEqual([]);
    expect402(await h.core.process(queryWork(5, fixedTags(h), payload, h).work));
    expect(await h.store.list()).toEqual([]);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - (how === "transfer" ? 1n : 0n));
  }, 15_000);

  /** A payment whose settlement answer is lost after the payer spent its nonce: left `settling`. */
  async function spentWhileLost(how: (typeof HOW)[number], maxId: number) {
    const impatient = h.newCore({ facilitatorTimeoutMs: 300 });
    const { body } = expect402(await impatient.process(queryWork(maxId, fixedTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    const nonce = payload.payload.authorization.nonce as `0x${string}`;
    h.proxy.setBehaviour({
      settle: {
        kind: "hook",
        before: async () => {
          await h.devnet.spendNonce(payer.privateKey, nonce, how);
          await Bun.sleep(600);
        },
      },
    });
    const before = (await h.store.unconfirmed()).length;
    await expect(impatient.process(queryWork(maxId, fixedTags(h), payload, h).work)).rejects.toThrow();
    h.proxy.setBehaviour({});
    expect(await h.store.unconfirmed()).toHaveLength(before + 1);
    return payload;
  }

  test.each(HOW)("%s while the settlement's answer is lost: presented again, a 402 that says so, the attempt removed, nothing run", async (how) => {
    const payload = await spentWhileLost(how, 6);
    const again = queryWork(6, fixedTags(h), payload, h);
    expect(expect402(await h.core.process(again.work)).body.error).toBe(PAYMENT_MESSAGES.nonceConsumed);
    expect(again.calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.store.list()).toEqual([]);
  }, 15_000);

  test.each(HOW)("%s while the settlement's answer is lost: `payments --reconcile` removes the attempt, saying why", async (how) => {
    await spentWhileLost(how, 7);
    const chain = createAuthorizationChecker({ [h.devnet.chainId]: h.devnet.rpcUrl });
    const [step] = await reconcileAttempts({ store: h.store, chain });
    expect(step!.outcome).toBe("removed");
    expect(step!.detail).toMatch(how === "cancel" ? /^its authorization was cancelled on chain in transaction 0x[0-9a-f]{64}, so this attempt moved nothing and never will: removed\.$/ : /^its authorization was spent on chain in transaction 0x[0-9a-f]{64} by another authorization with its nonce, which did not pay this attempt's amount to its payTo, so this attempt moved nothing and never will: removed\.$/);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.store.list()).toEqual([]);
  }, 15_000);

  test("`payments --reconcile` reads a chain's genesis block once, not once per attempt", async () => {
    await spentWhileLost("cancel", 10);
    await spentWhileLost("transfer", 11);
    // The devnet's RPC endpoint behind a real HTTP server that counts reads of block 0.
    let genesisReads = 0;
    const counter = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const body = await request.text();
        const call = JSON.parse(body) as { method: string; params?: unknown[] };
        if (call.method === "eth_getBlockByNumber" && call.params?.[0] === "0x0") genesisReads++;
        return fetch(h.devnet.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
      },
    });
    try {
      const chain = createAuthorizationChecker({ [h.devnet.chainId]: `http://127.0.0.1:${counter.port}` });
      const steps = await reconcileAttempts({ store: h.store, chain });
      expect(steps.map((step) => step.outcome)).toEqual(["removed", "removed"]);
      expect(genesisReads).toBe(1);
    } finally {
      counter.stop(true);
    }
  }, 20_000);
});

describe("a payment settled on chain by someone other than the facilitator", () => {
  /** /settle finds the buyer's own authorization already submitted (by a request that outlived its claim, or anyone holding it). */
  async function submittedFirst(core: PaymentCore, maxId: number) {
    const { body } = expect402(await core.process(queryWork(maxId, fixedTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    const { authorization, signature } = payload.payload;
    let transaction = "";
    h.proxy.setBehaviour({ settle: { kind: "hook", before: async () => void (transaction = await h.devnet.submitAuthorization(authorization as never, signature as `0x${string}`)) } });
    try {
      return { outcome: await core.process(queryWork(maxId, fixedTags(h), payload, h).work), payer, transaction: () => transaction };
    } finally {
      h.proxy.setBehaviour({});
    }
  }

  test("the chain shows this payment transferred: recorded and delivered with that transaction, paid once", async () => {
    const { outcome, payer, transaction } = await submittedFirst(h.core, 8);
    const { receipt } = expectPaid(outcome);
    expect(receipt.transaction).toBe(transaction());
    expect(await h.store.list()).toEqual([expect.objectContaining({ transaction: transaction(), amount: 7000n, rows: 8 })]);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 7000n);
    // Dated by its block, as a payment recovered when presented again is.
    expect((await h.store.list())[0]!.settledAt.getTime()).toBe((await minedTransaction(transaction())).blockMs);
    expect(h.events.at(-1)).toMatchObject({ type: "payment.settled", via: "recovery" });
  }, 15_000);

  test("without a way to read the chain: 402 that does not say nothing was charged, and the attempt is kept for reconcile", async () => {
    const { outcome, payer } = await submittedFirst(h.newCore({ rpc: false }), 9);
    expect(expect402(outcome).body.error).toMatch(/^The payment was verified but the facilitator did not settle it \(.*\), and whether it was settled some other way cannot be told now/);
    expect((await h.store.unconfirmed()).map((attempt) => attempt.payer)).toEqual([payer.account.address]);
  }, 15_000);
});

describe("a lost settlement recovered under the rules of a payment presented again", () => {
  /** /settle settles on chain, then answers after our client gave up. */
  async function lost(tags: PriceTag[], maxId: number) {
    const impatient = h.newCore({ facilitatorTimeoutMs: 300 });
    const { body } = expect402(await impatient.process(queryWork(maxId, tags, null, h).work));
    const { payload, payer } = await signFirst(h, body);
    h.proxy.setBehaviour({ settle: { kind: "hook", before: () => Bun.sleep(600) } });
    await expect(impatient.process(queryWork(maxId, tags, payload, h).work)).rejects.toThrow();
    const before = 1_000_000n;
    for (let i = 0; i < 50 && (await h.devnet.balanceOf(payer.account.address)) === before; i++) await Bun.sleep(100);
    h.proxy.setBehaviour({});
    expect(await h.store.unconfirmed()).toHaveLength(1);
    return payload;
  }

  test("per_row: rows added since: 402 with the offers for the new rows, the settlement recorded for the rows paid for", async () => {
    const payload = await lost(perRowTags(h), 25);
    h.data.run("INSERT INTO swaps (id, amount_usd) VALUES (0, 1)");
    try {
      const refused = expect402(await h.core.process(queryWork(25, perRowTags(h), payload, h).work));
      expect(refused.body.error).toBe(PAYMENT_MESSAGES.replayRowsChanged(25, 26));
    } finally {
      h.data.run("DELETE FROM swaps WHERE id = 0");
    }
    expect(await h.store.list()).toEqual([expect.objectContaining({ rows: 25, amount: 2500n })]);
    expectPaid(await h.core.process(queryWork(25, perRowTags(h), payload, h).work));
  }, 15_000);

  test("a query that fails when presented again (e.g. over a transport's cap): the failure is answered, the transfer recorded", async () => {
    const payload = await lost(fixedTags(h), 11);
    const { work } = queryWork(11, fixedTags(h), payload, h);
    const refused = new BadRequestError("The result is larger than this transport returns.");
    await expect(h.core.process({ ...work, execute: () => Promise.reject(refused) })).rejects.toBe(refused);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.store.list({ since: new Date(0) })).toEqual([expect.objectContaining({ rows: null })]);
    expectPaid(await h.core.process(queryWork(11, fixedTags(h), payload, h).work));
  }, 15_000);

  test("later than maxTimeoutSeconds after its validBefore: 402, the settlement recorded, nothing run", async () => {
    const payload = await lost(fixedTags(h), 9);
    h.clock = (Number(payload.payload.authorization.validBefore) + 301) * 1000;
    const { work, calls } = queryWork(9, fixedTags(h), payload, h);
    expect(expect402(await h.core.process(work)).body.error).toBe(PAYMENT_MESSAGES.replayExpired(300));
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.store.list({ since: new Date(0) })).toHaveLength(1);
  }, 15_000);
});

describe("a signature that cannot be checked here (not 65 bytes) from a smart wallet (a contract at `from`)", () => {
  test("a forged one is refused at /verify before anything is written or run", async () => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    await deployCodeAt(h.devnet, payer.account.address);
    const forged = copy(payload);
    forged.payload.signature = `0x${"ab".repeat(66)}`;
    const { work, calls } = queryWork(5, fixedTags(h), forged, h);
    expect(expect402(await h.core.process(work)).body.error).toMatch(/^The payment was not verified/);
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(h.proxy.requests.map((r) => r.endpoint)).toEqual(["verify"]);
  }, 15_000);

  test("when /verify fails, the request fails and nothing is left written or run", async () => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    await deployCodeAt(h.devnet, payer.account.address);
    const long = copy(payload);
    long.payload.signature = `0x${"ab".repeat(66)}`;
    h.proxy.setBehaviour({ verify: { kind: "status", status: 503 } });
    const { work, calls } = queryWork(5, fixedTags(h), long, h);
    await expect(h.core.process(work)).rejects.toThrow();
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(h.events.some((event) => event.type === "facilitator.error")).toBe(true);
  }, 15_000);
});
