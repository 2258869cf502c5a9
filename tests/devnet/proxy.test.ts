/**
 * The misbehaving facilitator proxy: each failure mode as the x402 facilitator client and a raw
 * HTTP caller see it, request counting, and a hook that makes settlement fail on chain for real.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HTTPFacilitatorClient } from "@x402/core/http";
import { toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { startFacilitatorProxy, type Devnet } from "../../devnet/index.ts";
import { DEVNET_START_TIMEOUT_MS, pay, post, requirementsFor, startTestDevnet } from "./helpers.ts";

let devnet: Devnet;

beforeAll(async () => {
  ({ devnet } = await startTestDevnet());
}, DEVNET_START_TIMEOUT_MS);

afterAll(async () => {
  await devnet?.stop();
});

describe("the misbehaving facilitator proxy", () => {
  test("forwards faithfully and counts requests per endpoint", async () => {
    const proxy = await startFacilitatorProxy(devnet.facilitatorUrl);
    try {
      expect(proxy.counts).toEqual({ verify: 0, settle: 0, supported: 0, other: 0 });
      const requirements = requirementsFor(devnet, 10n);
      const payload = await pay(devnet.payer.privateKey, requirements);
      const verified = await post(proxy.url, "verify", payload, requirements);
      expect(verified).toEqual({ status: 200, body: { isValid: true, payer: devnet.payer.address } });
      expect(proxy.counts).toEqual({ verify: 1, settle: 0, supported: 0, other: 0 });
      expect(proxy.requests[0]).toMatchObject({
        endpoint: "verify",
        method: "POST",
        target: "/verify",
        body: JSON.parse(JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements })),
      });
    } finally {
      await proxy.stop();
    }
  });

  test("500, malformed JSON and wrong-shaped JSON are failures to the x402 facilitator client", async () => {
    const proxy = await startFacilitatorProxy(devnet.facilitatorUrl, { verify: { kind: "status", status: 500 } });
    const client = new HTTPFacilitatorClient({ url: proxy.url });
    const requirements = requirementsFor(devnet, 10n);
    const payload = await pay(devnet.payer.privateKey, requirements);
    try {
      expect((await post(proxy.url, "verify", payload, requirements)).status).toBe(500);
      await expect(client.verify(payload, requirements)).rejects.toThrow("(500)");

      proxy.setBehaviour({ verify: { kind: "malformed" } });
      const malformed = await fetch(`${proxy.url}/verify`, { method: "POST", body: "{}" });
      expect(malformed.status).toBe(200);
      await expect(malformed.json()).rejects.toThrow();
      await expect(client.verify(payload, requirements)).rejects.toThrow();

      proxy.setBehaviour({ settle: { kind: "wrong-shape" } });
      const wrong = await post(proxy.url, "settle", payload, requirements);
      expect(wrong.status).toBe(200);
      expect(wrong.body).not.toHaveProperty("success");
      await expect(client.settle(payload, requirements)).rejects.toThrow();
    } finally {
      await proxy.stop();
    }
  });

  test("400 with isValid:false is a refusal, as x402-rs answers it", async () => {
    const proxy = await startFacilitatorProxy(devnet.facilitatorUrl, {
      verify: { kind: "reject", invalidReason: "invalid_exact_evm_payload_signature" },
    });
    const requirements = requirementsFor(devnet, 10n);
    const payload = await pay(devnet.payer.privateKey, requirements);
    try {
      const refused = await post(proxy.url, "verify", payload, requirements);
      expect(refused).toEqual({ status: 400, body: { isValid: false, invalidReason: "invalid_exact_evm_payload_signature" } });
      const error = await new HTTPFacilitatorClient({ url: proxy.url }).verify(payload, requirements).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "VerifyError", invalidReason: "invalid_exact_evm_payload_signature", statusCode: 400 });
    } finally {
      await proxy.stop();
    }
  });

  test("a hanging facilitator outlasts the client's timeout; a dropped or refused connection is a network error", async () => {
    const proxy = await startFacilitatorProxy(devnet.facilitatorUrl, { verify: { kind: "hang" }, settle: { kind: "drop" } });
    const requirements = requirementsFor(devnet, 10n);
    const payload = await pay(devnet.payer.privateKey, requirements);
    try {
      const timedOut = await new HTTPFacilitatorClient({ url: proxy.url, timeoutMs: 200 })
        .verify(payload, requirements)
        .catch((e: unknown) => e);
      expect(timedOut).toMatchObject({ name: "FacilitatorTimeoutError" });
      expect(proxy.counts.verify).toBe(1);

      await expect(post(proxy.url, "settle", payload, requirements)).rejects.toThrow();
      expect(proxy.counts.settle).toBe(1);

      await proxy.refuseConnections();
      await expect(post(proxy.url, "verify", payload, requirements)).rejects.toThrow();
      expect(proxy.counts.verify).toBe(1);
    } finally {
      await proxy.stop();
    }
  });

  test("a hook can drain the payer between verify and settle, so settlement fails on chain", async () => {
    const buyer = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const buyerAddress = privateKeyToAccount(buyer).address;
    await devnet.fund(buyerAddress, 5_000n);
    const proxy = await startFacilitatorProxy(devnet.facilitatorUrl, {
      settle: { kind: "hook", before: async () => void (await devnet.drain(buyer)) },
    });
    const requirements = requirementsFor(devnet, 5_000n);
    const payload = await pay(buyer, requirements);
    const payToBefore = await devnet.balanceOf(devnet.payTo);
    try {
      expect((await post(proxy.url, "verify", payload, requirements)).body.isValid).toBe(true);
      const settled = await post(proxy.url, "settle", payload, requirements);
      expect(settled.status).toBe(200);
      expect(settled.body).toMatchObject({ success: false, errorReason: "invalid_exact_evm_insufficient_balance" });
      expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore);
      expect(await devnet.balanceOf(buyerAddress)).toBe(0n);
    } finally {
      await proxy.stop();
    }
  });
});
