/**
 * The facilitator client against real HTTP servers: the devnet's x402 facilitator settling on a
 * local chain, and the misbehaving proxy in front of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startDevnet, startFacilitatorProxy, type Devnet, type FacilitatorProxy } from "../../devnet/index.ts";
import { FacilitatorError } from "../../src/errors.ts";
import { createFacilitatorClient } from "../../src/payment/facilitator.ts";
import { offersForQuery, paymentRequiredBody } from "../../src/payment/pricing.ts";
import { decodePaymentSignature } from "../../src/payment/wire.ts";
import { privateKeyToAccount } from "viem/accounts";
import { payingClient } from "./client.ts";
import { devnetToken, fundedAccount } from "./devnet-token.ts";
import { fixed } from "./fixtures.ts";

let devnet: Devnet;
let proxy: FacilitatorProxy;

beforeAll(async () => {
  devnet = await startDevnet();
  proxy = await startFacilitatorProxy(devnet.facilitatorUrl);
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await devnet?.stop();
});

/** A payment of `amount` from `account` to the devnet recipient, as the x402 client creates it. */
async function payment(amount: bigint, account = devnet.payer) {
  const offers = offersForQuery([fixed(amount, { token: devnetToken(devnet), payTo: devnet.payTo })], { counted: null, limit: null }, { maxTimeoutSeconds: 300 });
  const body = paymentRequiredBody({ url: "http://localhost/api/query?query=x", description: "test", mimeType: "application/json" }, offers, "");
  const header = await payingClient(privateKeyToAccount(account.privateKey)).sign(body);
  return { payload: decodePaymentSignature(header), requirements: offers[0]!.requirement };
}

const client = (url: string, timeoutMs = 10_000, headers: Record<string, string> = {}) => createFacilitatorClient({ url, timeoutMs, headers });

describe("against the devnet facilitator", () => {
  test("a valid payment verifies, then settles and moves exactly the amount on chain", async () => {
    const payer = await fundedAccount(devnet, 1_000_000n);
    const { payload, requirements } = await payment(4321n, { privateKey: payer.privateKey, address: payer.account.address });
    const facilitator = client(devnet.facilitatorUrl + "/");
    const payToBefore = await devnet.balanceOf(devnet.payTo);

    expect(await facilitator.verify(payload, requirements)).toEqual({ isValid: true, payer: payer.account.address });
    const settled = await facilitator.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: devnet.network, payer: payer.account.address });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 4321n);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + 4321n);
  });

  test("supported() lists the kinds the facilitator settles: exact, x402 V2, the devnet's network", async () => {
    const supported = await client(devnet.facilitatorUrl).supported();
    expect(supported.kinds).toContainEqual({ x402Version: 2, scheme: "exact", network: devnet.network });
  });

  test("a payer without funds is a value isValid:false, not an error", async () => {
    const { payload, requirements } = await payment(1000n, devnet.unfunded);
    const result = await client(devnet.facilitatorUrl).verify(payload, requirements);
    expect(result.isValid).toBe(false);
    if (!result.isValid) expect(result.invalidReason.length).toBeGreaterThan(0);
  });

  test("a settlement that fails on chain is a value success:false; nothing moves", async () => {
    const payer = await fundedAccount(devnet, 5000n);
    const { payload, requirements } = await payment(5000n, { privateKey: payer.privateKey, address: payer.account.address });
    const facilitator = client(devnet.facilitatorUrl);
    expect((await facilitator.verify(payload, requirements)).isValid).toBe(true);
    await devnet.drain(payer.privateKey);
    const payToBefore = await devnet.balanceOf(devnet.payTo);

    const result = await facilitator.settle(payload, requirements);
    expect(result).toMatchObject({ success: false, network: devnet.network });
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore);
  });
});

describe("against a misbehaving facilitator", () => {
  const failures = [
    ["drops the connection", { kind: "drop" }, /could not be reached/],
    ["answers 500", { kind: "status", status: 500 }, /HTTP 500/],
    ["answers 503", { kind: "status", status: 503 }, /HTTP 503/],
    ["answers a body that is not JSON", { kind: "malformed" }, /not JSON/],
    ["answers JSON of the wrong shape", { kind: "wrong-shape" }, /not an x402 V2/],
    ["answers 404 (wrong URL)", { kind: "status", status: 404 }, /not an x402 V2/],
  ] as const;

  test.each(failures)("verify: a facilitator that %s is a FacilitatorError (500) naming it", async (_name, behaviour, message) => {
    proxy.setBehaviour({ verify: behaviour });
    const { payload, requirements } = await payment(1000n);
    const error = await client(proxy.url, 10_000, { Authorization: "Bearer s3cret-token" })
      .verify(payload, requirements)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as FacilitatorError).status).toBe(500);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(proxy.url);
    expect((error as Error).message).not.toContain("s3cret");
  });

  test.each(failures)("settle: a facilitator that %s is a FacilitatorError (500)", async (_name, behaviour, message) => {
    proxy.setBehaviour({ settle: behaviour });
    const payer = await fundedAccount(devnet, 1000n);
    const { payload, requirements } = await payment(1000n, { privateKey: payer.privateKey, address: payer.account.address });
    const error = await client(proxy.url).settle(payload, requirements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as Error).message).toMatch(message);
  });

  test("a facilitator that hangs past the timeout is a FacilitatorError", async () => {
    proxy.setBehaviour({ verify: { kind: "hang" } });
    const { payload, requirements } = await payment(1000n);
    const error = await client(proxy.url, 200).verify(payload, requirements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as Error).message).toMatch(/did not answer \/verify within 200 ms/);
  });

  test("x402-rs style: 400 with isValid:false is a value carrying the reason", async () => {
    proxy.setBehaviour({ verify: { kind: "reject", invalidReason: "invalid_exact_evm_payload_signature" } });
    const { payload, requirements } = await payment(1000n);
    expect(await client(proxy.url).verify(payload, requirements)).toEqual({
      isValid: false,
      invalidReason: "invalid_exact_evm_payload_signature",
    });
  });

  test("the request is POST {url}/verify with the x402 V2 body {x402Version, paymentPayload, paymentRequirements}", async () => {
    proxy.setBehaviour({});
    proxy.resetCounts();
    const { payload, requirements } = await payment(1000n);
    expect((await client(proxy.url).verify(payload, requirements)).isValid).toBe(true);
    expect(proxy.requests).toMatchObject([{ endpoint: "verify", method: "POST", body: { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements } }]);
  });

  test("credentials and a query string in the URL reach the facilitator on every endpoint, and never appear in errors", async () => {
    proxy.setBehaviour({});
    proxy.resetCounts();
    const secretUrl = proxy.url.replace("http://", "http://buyer:s3cret-pass@") + "/?token=s3cret-token&v=2";
    const facilitator = client(secretUrl);
    const { payload, requirements } = await payment(1000n);
    expect((await facilitator.verify(payload, requirements)).isValid).toBe(true);
    expect((await facilitator.supported()).kinds.length).toBeGreaterThan(0);
    const basic = `Basic ${Buffer.from("buyer:s3cret-pass").toString("base64")}`;
    expect(proxy.requests.map(({ method, target, headers }) => ({ method, target, authorization: headers.authorization }))).toEqual([
      { method: "POST", target: "/verify?token=s3cret-token&v=2", authorization: basic },
      { method: "GET", target: "/supported?token=s3cret-token&v=2", authorization: basic },
    ]);

    for (const behaviour of [{ kind: "status", status: 503 }, { kind: "malformed" }, { kind: "status", status: 401 }] as const) {
      proxy.setBehaviour({ verify: behaviour });
      const error = await facilitator.verify(payload, requirements).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FacilitatorError);
      expect((error as Error).message).toContain(`facilitator ${proxy.url} `);
      expect((error as Error).message).not.toMatch(/s3cret|buyer|token=/);
    }
  });

  test("a facilitator that refuses connections is a FacilitatorError", async () => {
    const gone = await startFacilitatorProxy(devnet.facilitatorUrl);
    await gone.refuseConnections();
    const { payload, requirements } = await payment(1000n);
    const error = await client(gone.url).verify(payload, requirements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as Error).message).toMatch(/could not be reached/);
  });
});
