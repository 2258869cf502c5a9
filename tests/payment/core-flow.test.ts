/** The payment core's flow for a new payment (ARCHITECTURE.md §6 steps 3–7), against the devnet. */
import { describe, expect, test } from "bun:test";
import { BadRequestError, FacilitatorError } from "../../src/errors.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { perRow } from "./fixtures.ts";
import { copy, expect402, expectPaid, fixedTags, metadataTag, perRowTags, queryWork, signFirst, useHarness } from "./core-harness.ts";

const h = useHarness();

describe("without a payment", () => {
  test("per_row tags: count, then 402 whose description ends with the row count", async () => {
    const { work, calls } = queryWork(12, perRowTags(h), null, h);
    const { body } = expect402(await h.core.process(work));
    expect(body.resource.description).toBe("DEX swaps - 12 rows");
    expect(body.accepts.map((a) => a.amount)).toEqual(["1200"]);
    expect(body.error).toBe(PAYMENT_MESSAGES.required);
    expect(calls).toEqual({ count: 1, run: 0 });
    expect(h.proxy.requests).toEqual([]);
  });

  test("only fixed tags: 402 at once, nothing counted", async () => {
    const { work, calls } = queryWork(12, fixedTags(h), null, h);
    const { body } = expect402(await h.core.process(work));
    expect(body.resource.description).toBe("DEX swaps");
    expect(body.accepts.map((a) => a.amount)).toEqual(["7000"]);
    expect(calls).toEqual({ count: 0, run: 0 });
  });

  test("an empty result with no minimum is free, and nothing runs but the count", async () => {
    const { work, calls } = queryWork(0, [perRow(100n, { token: h.token, payTo: h.devnet.payTo })], null, h);
    expect(await h.core.process(work)).toEqual({ kind: "free" });
    expect(calls).toEqual({ count: 1, run: 0 });
  });

  test("an empty result on a table whose metadata is sold costs the metadata price", async () => {
    const tags = [perRow(100n, { token: h.token, payTo: h.devnet.payTo }), metadataTag(h, 300n)];
    const { body } = expect402(await h.core.process(queryWork(0, tags, null, h).work));
    expect(body.accepts.map((a) => a.amount)).toEqual(["300"]);
    expect(body.resource.description).toBe("DEX swaps - 0 rows");
    const { payload, payer } = await signFirst(h, body);
    const { work, calls } = queryWork(0, tags, payload, h);
    expectPaid(await h.core.process(work));
    expect(calls.run).toBe(1);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 300n);
  });

  test("row count outside every tier and no fixed tag: 400 naming the tiers", async () => {
    const { work } = queryWork(30, [perRow(100n, { token: h.token, payTo: h.devnet.payTo, maxItems: 20 })], null, h);
    await expect(h.core.process(work)).rejects.toThrow(/at most 20 rows/);
  });
});

describe("paying", () => {
  test("per_row: priced from the count, verified, then run, settled and recorded; balances move exactly", async () => {
    const { body } = expect402(await h.core.process(queryWork(25, perRowTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    const payToBefore = await h.devnet.balanceOf(h.devnet.payTo);
    const { work, calls } = queryWork(25, perRowTags(h), payload, h);
    const { receipt } = expectPaid(await h.core.process(work));
    expect(calls).toEqual({ count: 1, run: 1 });
    expect(receipt).toEqual({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), network: h.devnet.network, payer: payer.account.address });
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 2500n);
    expect(await h.devnet.balanceOf(h.devnet.payTo)).toBe(payToBefore + 2500n);
    expect(await h.store.list()).toEqual([
      expect.objectContaining({ tableName: "swaps", query: work.query, rows: 25, amount: 2500n, transaction: receipt.transaction, resourceUrl: work.resource.url }),
    ]);
    expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
    expect(h.events.filter((e) => e.type === "payment.settled")).toEqual([expect.objectContaining({ via: "settlement", amount: 2500n, rows: 25 })]);
  });

  test("fixed: a provably cheap query runs alongside /verify; settled with its rows", async () => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    const { work, calls } = queryWork(5, fixedTags(h), payload, h);
    expectPaid(await h.core.process(work));
    expect(calls).toEqual({ count: 0, run: 1 });
    expect(await h.store.unconfirmed()).toEqual([]);
    expect((await h.store.list()).map((e) => [e.amount, e.rows])).toEqual([[7000n, 5]]);
  });

  test("metadata: paid the same way; the ledger row has no query and no rows", async () => {
    const work = {
      tags: [metadataTag(h)],
      tableName: "swaps",
      query: null,
      resource: { url: "http://localhost:4021/api/table/swaps", description: "Table metadata", mimeType: "application/json" },
      payload: null,
      execute: async () => ({ rows: null, answer: null }),
    };
    const { body } = expect402(await h.core.process(work));
    expect(body.resource.mimeType).toBe("application/json");
    const { payload } = await signFirst(h, body);
    expectPaid(await h.core.process({ ...work, payload }));
    expect(await h.store.list()).toEqual([expect.objectContaining({ query: null, rows: null, amount: 300n })]);
  });
});

describe("a payment that can never settle costs no more than a quote", () => {
  test("a signature that does not recover to `from`: 402 before the facilitator, nothing run", async () => {
    const { body } = expect402(await h.core.process(queryWork(20, perRowTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    const forged = copy(payload);
    forged.payload.signature = `${forged.payload.signature.slice(0, 10)}${forged.payload.signature[10] === "a" ? "b" : "a"}${forged.payload.signature.slice(11)}`;
    const { work, calls } = queryWork(20, perRowTags(h), forged, h);
    const { body: refused } = expect402(await h.core.process(work));
    expect(refused.error).toStartWith("The signed payment cannot pay this offer (");
    expect(calls).toEqual({ count: 1, run: 0 });
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.unconfirmed()).toEqual([]);
  });

  test.each([
    ["another recipient", (p: any) => (p.payload.authorization.to = "0x000000000000000000000000000000000000dEaD"), "not the offer's payTo"],
    ["another amount", (p: any) => (p.payload.authorization.value = "1"), "not the offer's"],
    ["not valid yet", (p: any) => (p.payload.authorization.validAfter = String(Math.floor(Date.now() / 1000) + 100)), "not valid yet"],
    ["expired", (p: any) => (p.payload.authorization.validBefore = String(Math.floor(Date.now() / 1000) - 1)), "expired"],
  ])("an authorization with %s: 402 naming it, no facilitator call, nothing run", async (_name, tamper, phrase) => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    const tampered = copy(payload);
    tamper(tampered);
    const { work, calls } = queryWork(5, fixedTags(h), tampered, h);
    expect(expect402(await h.core.process(work)).body.error).toContain(phrase);
    expect(calls).toEqual({ count: 0, run: 0 });
    expect(h.proxy.requests).toEqual([]);
  });

  test("an authorization living longer than an offer allows is refused before any work", async () => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    const lasting = copy(payload);
    lasting.payload.authorization.validBefore = (2n ** 255n).toString();
    const { work, calls } = queryWork(5, fixedTags(h), lasting, h);
    expect(expect402(await h.core.process(work)).body.error).toBe(PAYMENT_MESSAGES.livesTooLong(300));
    expect(calls).toEqual({ count: 0, run: 0 });
    expect(h.proxy.requests).toEqual([]);
  });

  test("per_row from an unfunded wallet: refused on its balance, read on chain, before /verify; nothing run or written", async () => {
    const { body } = expect402(await h.core.process(queryWork(20, perRowTags(h), null, h).work));
    const { payload } = await signFirst(h, body, 0n);
    const { work, calls } = queryWork(20, perRowTags(h), payload, h);
    const { from } = payload.payload.authorization;
    expect(expect402(await h.core.process(work)).body.error).toBe(PAYMENT_MESSAGES.insufficientBalance(from, "0 USDC", "0.002 USDC"));
    expect(calls).toEqual({ count: 1, run: 0 });
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(h.events.at(-1)).toMatchObject({ type: "payment.refused", reason: "insufficient-balance" });
  });

  test("per_row refused by /verify: verified before the query runs, so the refusal costs no scan", async () => {
    const { body } = expect402(await h.core.process(queryWork(20, perRowTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    h.proxy.setBehaviour({ verify: { kind: "reject", invalidReason: "invalid_exact_evm_signature" } });
    const { work, calls } = queryWork(20, perRowTags(h), payload, h);
    expect(expect402(await h.core.process(work)).body.error).toMatch(/^The payment was not verified \(invalid_exact_evm_signature/);
    expect(calls).toEqual({ count: 1, run: 0 });
    expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(await h.store.unconfirmed()).toEqual([]);
  });

  test("an accepted that matches no offer: 402 with the current offers, never 500", async () => {
    const { body } = expect402(await h.core.process(queryWork(20, fixedTags(h), null, h).work));
    const cheaper = { ...body, accepts: [{ ...body.accepts[0]!, amount: "1" }] };
    const { payload } = await signFirst(h, cheaper);
    const { body: refused } = expect402(await h.core.process(queryWork(20, fixedTags(h), payload, h).work));
    expect(refused.error).toBe(PAYMENT_MESSAGES.noMatch);
    expect(refused.accepts).toEqual(body.accepts);
    expect(h.proxy.requests).toEqual([]);
  });

  test("a per_row payment quoted for another row count: 402 with the offers for the current count, nothing run", async () => {
    const { body } = expect402(await h.core.process(queryWork(20, perRowTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    const { work, calls } = queryWork(30, perRowTags(h), payload, h);
    const { body: refused } = expect402(await h.core.process(work));
    expect(refused.accepts.map((a) => a.amount)).toEqual(["3000"]);
    expect(refused.resource.description).toBe("DEX swaps - 30 rows");
    expect(calls).toEqual({ count: 1, run: 0 });
    expect(h.proxy.requests).toEqual([]);
  });
});

describe("failures are never charged", () => {
  test("per_row: rows removed while /verify ran: nothing settled, 402 with the offers for the new rows", async () => {
    const { body } = expect402(await h.core.process(queryWork(35, perRowTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    h.proxy.setBehaviour({ verify: { kind: "hook", before: async () => void h.data.run("DELETE FROM swaps WHERE id = 35") } });
    try {
      const { work } = queryWork(35, perRowTags(h), payload, h);
      const { body: refused } = expect402(await h.core.process(work));
      expect(refused.error).toBe(PAYMENT_MESSAGES.rowsChanged(35, 34));
      expect(refused.accepts.map((a) => a.amount)).toEqual(["3400"]);
      expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
      expect(await h.store.unconfirmed()).toEqual([]);
      expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n);
    } finally {
      h.data.run("INSERT INTO swaps (id, amount_usd) VALUES (35, 52.5)");
    }
  });

  test("a query that fails after /verify accepted the payment is never settled, and leaves no attempt", async () => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    const { work } = queryWork(5, fixedTags(h), payload, h);
    await expect(h.core.process({ ...work, execute: async () => Promise.reject(new BadRequestError("integer overflow")) })).rejects.toThrow("integer overflow");
    expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n);
    // The claim was released: the same payment is processed again.
    expectPaid(await h.core.process(queryWork(5, fixedTags(h), payload, h).work));
  });

  test("the client left while the query ran: nothing settled, no attempt left", async () => {
    const { body } = expect402(await h.core.process(queryWork(9, perRowTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body);
    const gone = new AbortController();
    const { work } = queryWork(9, perRowTags(h), payload, h);
    const execute = work.execute;
    const outcome = h.core.process({ ...work, signal: gone.signal, execute: async () => { gone.abort(); return execute(); } });
    await expect(outcome).rejects.toThrow("closed the connection");
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(h.proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(await h.devnet.balanceOf(payer.account.address)).toBe(1_000_000n);
  });

  test("settlement fails: 402 with the failed receipt, no ledger row, nothing moved, the payment is free again", async () => {
    const { body } = expect402(await h.core.process(queryWork(15, perRowTags(h), null, h).work));
    const { payload, payer } = await signFirst(h, body, 1500n);
    h.proxy.setBehaviour({ settle: { kind: "hook", before: async () => void (await h.devnet.drain(payer.privateKey)) } });
    const payToBefore = await h.devnet.balanceOf(h.devnet.payTo);
    const refused = expect402(await h.core.process(queryWork(15, perRowTags(h), payload, h).work));
    expect(refused.settlement).toMatchObject({ success: false, network: h.devnet.network });
    expect(refused.body.error).toMatch(/could not be settled .* nothing was charged/);
    expect(refused.body.accepts.map((a) => a.amount)).toEqual(["1500"]);
    expect(await h.store.list()).toEqual([]);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(await h.devnet.balanceOf(h.devnet.payTo)).toBe(payToBefore);
    h.proxy.setBehaviour({});
    // Processed anew: the payer, drained, is now refused on its balance.
    expect(expect402(await h.core.process(queryWork(15, perRowTags(h), payload, h).work)).body.error).toMatch(/^The payment cannot be settled \(insufficient balance/);
  });

  test("facilitator down: FacilitatorError (500), claim released, nothing recorded; /settle unanswered leaves the attempt", async () => {
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { payload } = await signFirst(h, body);
    h.proxy.setBehaviour({ verify: { kind: "status", status: 502 } });
    await expect(h.core.process(queryWork(5, fixedTags(h), payload, h).work)).rejects.toBeInstanceOf(FacilitatorError);
    expect(await h.store.unconfirmed()).toEqual([]);

    h.proxy.setBehaviour({ settle: { kind: "drop" } });
    await expect(h.core.process(queryWork(5, fixedTags(h), payload, h).work)).rejects.toBeInstanceOf(FacilitatorError);
    expect(await h.store.list()).toEqual([]);
    expect(await h.store.unconfirmed()).toHaveLength(1);
    expect(h.events.some((e) => e.type === "facilitator.error" && e.endpoint === "settle")).toBe(true);
  });
});
