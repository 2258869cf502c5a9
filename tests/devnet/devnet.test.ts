/**
 * The local paid sandbox, exercised without arrow402: real chain, real token, real facilitator,
 * payments created by the x402 client libraries, balances read back from the chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HTTPFacilitatorClient } from "@x402/core/http";
import { toHex, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { startDevnet, type Devnet } from "../../devnet/index.ts";
import { DEVNET_START_TIMEOUT_MS, pay, post, requirementsFor, startTestDevnet } from "./helpers.ts";

let devnet: Devnet;
let chain: PublicClient;

beforeAll(async () => {
  ({ devnet, chain } = await startTestDevnet());
}, DEVNET_START_TIMEOUT_MS);

afterAll(async () => {
  await devnet?.stop();
});

describe("devnet setup", () => {
  test("the token on chain has the EIP-712 domain the config advertises", async () => {
    const read = (functionName: string) =>
      chain.readContract({ address: devnet.token.address, abi: devnet.token.abi, functionName });
    expect(await read("name")).toBe(devnet.token.name);
    expect(await read("version")).toBe(devnet.token.version);
    expect(Number(await read("decimals"))).toBe(6);
    const domain = (await read("eip712Domain")) as readonly unknown[];
    expect(domain[1]).toBe(devnet.token.name);
    expect(domain[3]).toBe(31337n);
    expect(String(domain[4]).toLowerCase()).toBe(devnet.token.address.toLowerCase());
    expect(devnet.tokenConfig()).toEqual({
      key: "usdc/devnet",
      chain: "31337",
      address: devnet.token.address,
      name: devnet.token.name,
      version: devnet.token.version,
      decimals: 6,
    });
  });

  test("the payer is funded, the others are not, and the payer holds no ETH", async () => {
    expect(await devnet.balanceOf(devnet.payer.address)).toBe(1000n * 10n ** 6n);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(0n);
    expect(await devnet.balanceOf(devnet.unfunded.address)).toBe(0n);
    expect(await chain.getBalance({ address: devnet.payer.address })).toBe(0n);
  });

  test("/supported lists exact on eip155:31337 with the facilitator's signer", async () => {
    const supported = await new HTTPFacilitatorClient({ url: devnet.facilitatorUrl }).getSupported();
    expect(supported.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: "eip155:31337" }]);
    expect(Object.values(supported.signers).flat()).toContain(devnet.facilitatorSigner);
  });
});

describe("paying through the devnet facilitator", () => {
  test("verify then settle moves exactly the amount on chain; the facilitator pays the gas", async () => {
    const amount = 12_345n;
    const requirements = requirementsFor(devnet, amount);
    const payload = await pay(devnet.payer.privateKey, requirements);
    const payerBefore = await devnet.balanceOf(devnet.payer.address);
    const payToBefore = await devnet.balanceOf(devnet.payTo);
    const gasBefore = await chain.getBalance({ address: devnet.facilitatorSigner });

    const verified = await post(devnet.facilitatorUrl, "verify", payload, requirements);
    expect(verified).toEqual({ status: 200, body: { isValid: true, payer: devnet.payer.address } });
    expect(await devnet.balanceOf(devnet.payer.address)).toBe(payerBefore);

    const settled = await post(devnet.facilitatorUrl, "settle", payload, requirements);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ success: true, network: "eip155:31337", payer: devnet.payer.address });
    const receipt = await chain.getTransactionReceipt({ hash: settled.body.transaction as Hex });
    expect(receipt.status).toBe("success");

    expect(await devnet.balanceOf(devnet.payer.address)).toBe(payerBefore - amount);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + amount);
    expect(await chain.getBalance({ address: devnet.payer.address })).toBe(0n);
    expect(await chain.getBalance({ address: devnet.facilitatorSigner })).toBeLessThan(gasBefore);
  });

  test("a replayed payment is refused at verify and at settle, and moves nothing", async () => {
    const requirements = requirementsFor(devnet, 500n);
    const payload = await pay(devnet.payer.privateKey, requirements);
    const first = await post(devnet.facilitatorUrl, "settle", payload, requirements);
    expect(first.body.success).toBe(true);
    const payerAfterFirst = await devnet.balanceOf(devnet.payer.address);

    const replayVerify = await post(devnet.facilitatorUrl, "verify", payload, requirements);
    expect(replayVerify.status).toBe(200);
    expect(replayVerify.body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_nonce_already_used" });
    const replaySettle = await post(devnet.facilitatorUrl, "settle", payload, requirements);
    expect(replaySettle.status).toBe(200);
    expect(replaySettle.body).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used" });
    expect(await devnet.balanceOf(devnet.payer.address)).toBe(payerAfterFirst);
  });

  test("a payer without tokens is refused with the precise reason", async () => {
    const requirements = requirementsFor(devnet, 1_000n);
    const payload = await pay(devnet.unfunded.privateKey, requirements);
    const verified = await post(devnet.facilitatorUrl, "verify", payload, requirements);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_insufficient_balance" });
  });

  test("a payment for another amount than required is refused", async () => {
    const payload = await pay(devnet.payer.privateKey, requirementsFor(devnet, 100n));
    const verified = await post(devnet.facilitatorUrl, "verify", payload, requirementsFor(devnet, 200n));
    expect(verified.body.isValid).toBe(false);
  });

  test("a body without payment objects is 400, as in the reference facilitator", async () => {
    const response = await fetch(`${devnet.facilitatorUrl}/verify`, { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
  });

  test("fund mints and drain empties an account without it holding ETH", async () => {
    const privateKey = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const { address } = privateKeyToAccount(privateKey);
    await devnet.fund(address, 777n);
    expect(await devnet.balanceOf(address)).toBe(777n);
    expect(await devnet.drain(privateKey)).toBe(777n);
    expect(await devnet.balanceOf(address)).toBe(0n);
  });
});

describe("several sandboxes in one process", () => {
  test("a second devnet settles payments on its own chain after the first one settled", async () => {
    // The first facilitator's last transaction succeeds, so any nonce it remembers is current.
    const firstRequirements = requirementsFor(devnet, 1n);
    const firstPayment = await pay(devnet.payer.privateKey, firstRequirements);
    expect((await post(devnet.facilitatorUrl, "settle", firstPayment, firstRequirements)).body.success).toBe(true);
    const second = await startDevnet();
    try {
      expect(second.rpcUrl).not.toBe(devnet.rpcUrl);
      const requirements = { ...requirementsFor(devnet, 42n, second.payTo), asset: second.token.address };
      const payload = await pay(second.payer.privateKey, requirements);
      const settled = await post(second.facilitatorUrl, "settle", payload, requirements);
      expect(settled.body).toMatchObject({ success: true });
      expect(await second.balanceOf(second.payTo)).toBe(42n);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
