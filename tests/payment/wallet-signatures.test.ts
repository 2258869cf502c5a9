/**
 * Signatures that are not 65 bytes (a smart wallet's: ERC-1271, ERC-6492) against the devnet: they
 * are checked with one `eth_call` to the chain's RPC endpoint before the facilitator is asked, so a
 * forged one costs no /verify call (payment/wallet-signature.ts); without an answer from the
 * chain, the facilitator decides, and nothing is written or run before it has.
 */
import { describe, expect, test } from "bun:test";
import type { Hex } from "viem";
import { authorizationDigest } from "../../src/payment/signature.ts";
import { chainIdOf } from "../../src/payment/chain.ts";
import type { ExactPaymentPayload } from "../../src/payment/payload.ts";
import { installSmartWallet } from "../support/smart-wallet.ts";
import { copy, expect402, fixedTags, queryWork, signFirst, useHarness } from "./core-harness.ts";

const h = useHarness();

const FORGED = `0x${"ab".repeat(66)}`;

/** A payment signed by a funded EOA, quoted for `SELECT … WHERE id <= 5`, before any tampering. */
async function signedPayment() {
  const { body } = expect402(await h.core.process(queryWork(5, fixedTags(h), null, h).work));
  const { payload } = await signFirst(h, body);
  h.proxy.resetCounts();
  return payload;
}

/** The payload's authorization re-signed by `wallet`, its `from` set to the wallet. */
async function signedByWallet(payload: ExactPaymentPayload, wallet: { address: Hex; sign(digest: Hex): Promise<Hex> }) {
  const paid = copy(payload);
  paid.payload.authorization.from = wallet.address;
  const { accepted } = paid;
  const domain = { name: String(accepted.extra!.name), version: String(accepted.extra!.version), chainId: BigInt(chainIdOf(accepted.network)), verifyingContract: accepted.asset };
  paid.payload.signature = await wallet.sign(`0x${Buffer.from(authorizationDigest(domain, paid.payload.authorization)).toString("hex")}`);
  return paid;
}

describe("a signature that is not 65 bytes (a smart wallet's)", () => {
  test("a forged one is refused from the chain's answer: no /verify call, nothing written or run", async () => {
    const forged = copy(await signedPayment());
    forged.payload.signature = FORGED;
    const { work, calls } = queryWork(5, fixedTags(h), forged, h);
    const { body } = expect402(await h.core.process(work));
    expect(body.error).toContain("the signature is not valid for the authorization's `from` (a smart wallet's signature, checked on chain)");
    expect(h.proxy.requests).toEqual([]);
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
  }, 15_000);

  test("a wallet's valid signature passes the chain's check and goes to /verify; a wrong one from the same wallet does not", async () => {
    const payload = await signedPayment();
    const wallet = await installSmartWallet(h.devnet.rpcUrl);
    const genuine = await signedByWallet(payload, wallet);
    expect(genuine.payload.signature.length).toBe(2 + 66 * 2);
    const { work, calls } = queryWork(5, fixedTags(h), genuine, h);
    // The devnet's token splits signatures as ECDSA (FiatToken before v2.2), so the facilitator's
    // simulation refuses it: what matters here is that the facilitator was asked.
    expect(expect402(await h.core.process(work)).body.error).toMatch(/^The payment was not verified/);
    expect(h.proxy.requests.map((r) => r.endpoint)).toEqual(["verify"]);
    expect(calls.run).toBe(0);

    h.proxy.resetCounts();
    const other = await signedByWallet(payload, { address: wallet.address, sign: (await installSmartWallet(h.devnet.rpcUrl)).sign });
    expect(expect402(await h.core.process(queryWork(5, fixedTags(h), other, h).work)).body.error).toContain("checked on chain");
    expect(h.proxy.requests).toEqual([]);
  }, 15_000);

  test.each([
    ["no RPC endpoint for the chain", false as const],
    ["an endpoint that does not answer", "http://127.0.0.1:9/"],
  ])("with %s, the facilitator decides at /verify, before anything is written or run", async (_, rpc) => {
    const forged = copy(await signedPayment());
    forged.payload.signature = FORGED;
    const core = h.newCore({ rpc });
    const { work, calls } = queryWork(5, fixedTags(h), forged, h);
    expect(expect402(await core.process(work)).body.error).toMatch(/^The payment was not verified/);
    expect(h.proxy.requests.map((r) => r.endpoint)).toEqual(["verify"]);
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
  }, 15_000);

  test("when /verify fails, the request fails and nothing is left written or run", async () => {
    const forged = copy(await signedPayment());
    forged.payload.signature = FORGED;
    h.proxy.setBehaviour({ verify: { kind: "status", status: 503 } });
    const { work, calls } = queryWork(5, fixedTags(h), forged, h);
    await expect(h.newCore({ rpc: false }).process(work)).rejects.toThrow();
    expect(calls.run).toBe(0);
    expect(await h.store.unconfirmed()).toEqual([]);
    expect(h.events.some((event) => event.type === "facilitator.error")).toBe(true);
  }, 15_000);
});
