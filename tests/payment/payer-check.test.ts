/**
 * The chain's word on a payer before any facilitator call or ledger write (src/payment/payer-check.ts,
 * ARCHITECTURE.md §6 step 4), through the payment core against the devnet: a signature only a smart
 * wallet could make, from an address without one, and a balance below the price, are refused without
 * /verify; the facilitator decides whenever the chain cannot; a funded payer's balance is read once
 * per PAYER_CACHE_MS however often it pays, and a payer emptied meanwhile reaches /verify once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { serializeErc6492Signature, zeroAddress, type Hex } from "viem";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { PAYER_CACHE_MS } from "../../src/payment/payer-check.ts";
import { decodePaymentSignature } from "../../src/payment/wire.ts";
import { payingClient } from "./client.ts";
import { copy, expect402, expectPaid, fixedTags, queryWork, signFirst, useHarness } from "./core-harness.ts";
import { fundedAccount } from "./devnet-token.ts";

const h = useHarness();

/** A JSON-RPC endpoint in front of the devnet's, counting the calls it forwards. */
function countingRpc() {
  const methods: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = await request.text();
      const call = JSON.parse(body) as { method: string; params?: [{ data?: string; input?: string }] };
      const data = call.params?.[0]?.data ?? call.params?.[0]?.input ?? "";
      // balanceOf(address) is selector 0x70a08231.
      methods.push(call.method === "eth_call" && data.startsWith("0x70a08231") ? "balanceOf" : call.method);
      return fetch(h.devnet.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, methods, stop: () => server.stop(true) };
}

/** An endpoint that accepts every request and never answers. */
const never = Promise.withResolvers<void>();
let silentRequests = 0;
const silent = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch() {
    silentRequests += 1;
    await never.promise;
    return new Response("late");
  },
});
afterAll(() => {
  never.resolve();
  silent.stop(true);
});

/** A funded payer's payload for the fixed offer, and its 402. */
async function fixedPayment(balance = 1_000_000n) {
  const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
  return { body, ...(await signFirst(h, body, balance)) };
}

const FACTORY = "0x00000000000000000000000000000000000fac70" as Hex;

describe("a signature that is not 65 bytes, from an address without a contract", () => {
  /** Signatures only a smart wallet could make, none of which deploys one. */
  const keyless: [string, (signed: Hex) => Hex][] = [
    ["one byte", () => "0x01"],
    ["64 bytes", (signed) => signed.slice(0, 130) as Hex],
    ["66 bytes", (signed) => `${signed}00`],
    ["700 bytes of noise", () => `0x${"ab".repeat(700)}`],
    ["ERC-6492-wrapped, with the zero address as factory", (signed) => serializeErc6492Signature({ address: zeroAddress, data: "0x1234", signature: signed })],
  ];

  test.each(keyless)("%s: 402 naming the problem; no facilitator call, nothing written", async (_name, signature) => {
    const { payload } = await fixedPayment();
    const forged = copy(payload);
    forged.payload.signature = signature(payload.payload.signature as Hex);
    const { work, calls } = queryWork(5, fixedTags(h), forged, h);
    const { body } = expect402(await h.core.process(work));
    expect(body.error).toBe(PAYMENT_MESSAGES.notSmartWallet(payload.payload.authorization.from));
    expect(calls.run).toBe(0);
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(h.events.at(-1)).toMatchObject({ type: "payment.refused", reason: "no-smart-wallet" });
  });

  test("unfunded as well: the signature is the problem named", async () => {
    const { payload } = await fixedPayment(0n);
    const forged = copy(payload);
    forged.payload.signature = `0x${"ab".repeat(66)}`;
    expect(expect402(await h.core.process(queryWork(5, fixedTags(h), forged, h).work)).body.error).toBe(
      PAYMENT_MESSAGES.notSmartWallet(payload.payload.authorization.from),
    );
    expect(h.proxy.requests).toEqual([]);
  });

  test("ERC-6492-wrapped with a factory (a wallet to deploy): the facilitator decides", async () => {
    const { payload } = await fixedPayment();
    const wrapped = copy(payload);
    wrapped.payload.signature = serializeErc6492Signature({ address: FACTORY, data: "0x1234", signature: payload.payload.signature as Hex });
    const { work, calls } = queryWork(5, fixedTags(h), wrapped, h);
    expect(expect402(await h.core.process(work)).body.error).toMatch(/^The payment was not verified/);
    expect(calls.run).toBe(0);
    expect(h.proxy.requests.map((r) => r.endpoint)).toEqual(["verify"]);
    expect(await h.store.unconfirmed()).toEqual([]);
  });
});

describe("the balance", () => {
  test("below the price: 402 saying what the payer holds and what the offer costs; no facilitator call, nothing written", async () => {
    const { payload } = await fixedPayment(6999n);
    const { work, calls } = queryWork(5, fixedTags(h), payload, h);
    const { body } = expect402(await h.core.process(work));
    expect(body.error).toBe(PAYMENT_MESSAGES.insufficientBalance(payload.payload.authorization.from, "0.006999 USDC", "0.007 USDC"));
    expect(body.error).toContain("insufficient balance: the authorization's from");
    expect(calls.run).toBe(0);
    expect(h.proxy.requests).toEqual([]);
    expect(await h.store.unconfirmed()).toEqual([]);
  });

  test("exactly the price: paid", async () => {
    const { payload } = await fixedPayment(7000n);
    expectPaid(await h.core.process(queryWork(5, fixedTags(h), payload, h).work));
  });

  test("a funded payer paying again and again: its balance is read once per PAYER_CACHE_MS", async () => {
    const rpc = countingRpc();
    try {
      const core = h.newCore({ rpc: rpc.url });
      h.clock = Date.now();
      const { body } = expect402(await core.process(queryWork(5, fixedTags(h), null, h).work));
      const { account } = await fundedAccount(h.devnet, 1_000_000n);
      const client = payingClient(account);
      const pay = async () => expectPaid(await core.process(queryWork(5, fixedTags(h), decodePaymentSignature(await client.sign(body)), h).work));
      for (let i = 0; i < 3; i++) await pay();
      expect(rpc.methods.filter((method) => method === "balanceOf")).toHaveLength(1);
      h.clock += PAYER_CACHE_MS;
      await pay();
      expect(rpc.methods.filter((method) => method === "balanceOf")).toHaveLength(2);
      // Nothing but the balance is read for an ECDSA signature.
      expect(new Set(rpc.methods)).toEqual(new Set(["balanceOf"]));
    } finally {
      rpc.stop();
    }
  }, 15_000);

  test("a payer found funded, then emptied: its next payment reaches /verify once, the ones after are refused on its balance", async () => {
    h.clock = Date.now();
    const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
    const { account, privateKey } = await fundedAccount(h.devnet, 20_000n);
    const client = payingClient(account);
    const payload = async () => decodePaymentSignature(await client.sign(body));
    expectPaid(await h.core.process(queryWork(5, fixedTags(h), await payload(), h).work));
    // Remembered: 20,000 read, less the 7,000 paid. The chain now says 0.
    await h.devnet.drain(privateKey);
    h.proxy.resetCounts();
    expect(expect402(await h.core.process(queryWork(5, fixedTags(h), await payload(), h).work)).body.error).toMatch(/^The payment was not verified/);
    expect(h.proxy.counts.verify).toBe(1);
    for (let i = 0; i < 3; i++) {
      expect(expect402(await h.core.process(queryWork(5, fixedTags(h), await payload(), h).work)).body.error).toMatch(/insufficient balance/);
    }
    expect(h.proxy.counts.verify).toBe(1);
  }, 15_000);
});

describe("when the chain cannot tell, the facilitator decides", () => {
  test("no RPC endpoint for the chain: an unfunded payer's payment goes to /verify, as before", async () => {
    const { payload } = await fixedPayment(0n);
    const blind = h.newCore({ rpc: false });
    expect(expect402(await blind.process(queryWork(5, fixedTags(h), payload, h).work)).body.error).toMatch(/^The payment was not verified/);
    expect(h.proxy.counts.verify).toBe(1);
  });

  test("an endpoint that never answers: /verify after PAYER_READ_MS, and the chain is not asked again for PAYER_CACHE_MS", async () => {
    const core = h.newCore({ rpc: `http://127.0.0.1:${silent.port}` });
    const before = silentRequests;
    for (let i = 0; i < 2; i++) {
      const { payload } = await fixedPayment(0n);
      const started = performance.now();
      expect(expect402(await core.process(queryWork(5, fixedTags(h), payload, h).work)).body.error).toMatch(/^The payment was not verified/);
      expect(performance.now() - started).toBeLessThan(4_000);
    }
    expect(h.proxy.counts.verify).toBe(2);
    expect(silentRequests - before).toBe(1);
  }, 15_000);
});
