/**
 * The test token's own rules, probed directly on chain with hand-signed EIP-3009 authorizations:
 * both overloads, time bounds, malleable signatures, forged signers, single-use nonces, minting.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWalletClient, hexToBigInt, http, parseSignature, toHex, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { anvil } from "viem/chains";
import { authorizeTransfer } from "../../devnet/authorize.ts";
import type { Devnet } from "../../devnet/index.ts";
import { DEVNET_START_TIMEOUT_MS, startTestDevnet } from "./helpers.ts";

let devnet: Devnet;
let chain: PublicClient;

beforeAll(async () => {
  ({ devnet, chain } = await startTestDevnet());
}, DEVNET_START_TIMEOUT_MS);

afterAll(async () => {
  await devnet?.stop();
});

describe("the test token's EIP-3009 rules", () => {
  /** anvil's public dev account 2: submits real transactions so a nonce can be consumed. */
  const SUBMITTER_KEY: Hex = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
  const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const now = () => BigInt(Math.floor(Date.now() / 1000));
  const token = () => ({ address: devnet.token.address, name: devnet.token.name, version: devnet.token.version, chainId: 31337 });
  const payer = () => privateKeyToAccount(devnet.payer.privateKey);

  /** The revert reason of submitting these arguments, or "ok" if the call would succeed. */
  async function outcome(args: readonly unknown[]): Promise<string> {
    try {
      await chain.simulateContract({
        account: devnet.facilitatorSigner,
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: "transferWithAuthorization",
        args,
      });
      return "ok";
    } catch (error) {
      return (error as Error).message;
    }
  }

  /** The same authorization in the (v, r, s) overload. */
  function asVrs(args: readonly [Hex, Hex, bigint, bigint, bigint, Hex, Hex], mutate = false) {
    const { r, s, v } = parseSignature(args[6]);
    const high = SECP256K1_ORDER - hexToBigInt(s);
    const twinV = v === 27n ? 28 : 27;
    return mutate
      ? [...args.slice(0, 6), twinV, r, toHex(high, { size: 32 })]
      : [...args.slice(0, 6), Number(v), r, s];
  }

  test("a fresh authorization is accepted in both overloads", async () => {
    const args = await authorizeTransfer(payer(), { token: token(), to: devnet.payTo, value: 1n });
    expect(await outcome(args)).toBe("ok");
    expect(await outcome(asVrs(args))).toBe("ok");
  });

  test("time bounds are enforced", async () => {
    const expired = await authorizeTransfer(payer(), { token: token(), to: devnet.payTo, value: 1n, validBefore: now() - 60n });
    expect(await outcome(expired)).toContain("authorization is expired");
    const early = await authorizeTransfer(payer(), { token: token(), to: devnet.payTo, value: 1n, validAfter: now() + 3600n });
    expect(await outcome(early)).toContain("authorization is not yet valid");
  });

  test("the malleable high-s twin of a valid signature is refused", async () => {
    const args = await authorizeTransfer(payer(), { token: token(), to: devnet.payTo, value: 1n });
    expect(await outcome(asVrs(args))).toBe("ok");
    expect(await outcome(asVrs(args, true))).toContain("invalid signature 's' value");
  });

  test("a signature by someone other than `from` is refused", async () => {
    const forged = await authorizeTransfer(privateKeyToAccount(devnet.unfunded.privateKey), {
      token: token(),
      to: devnet.payTo,
      value: 1n,
    });
    expect(await outcome([devnet.payer.address, ...forged.slice(1)])).toContain("invalid signature");
  });

  test("a nonce is single-use and only the owner mints", async () => {
    const submitter = createWalletClient({ account: privateKeyToAccount(SUBMITTER_KEY), chain: anvil, transport: http(devnet.rpcUrl) });
    const args = await authorizeTransfer(payer(), { token: token(), to: devnet.payTo, value: 3n });
    const hash = await submitter.writeContract({
      address: devnet.token.address,
      abi: devnet.token.abi,
      functionName: "transferWithAuthorization",
      args,
    });
    expect((await chain.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe("success");
    expect(
      await chain.readContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: "authorizationState",
        args: [devnet.payer.address, args[5]],
      }),
    ).toBe(true);
    expect(await outcome(args)).toContain("authorization is used or canceled");

    const mint = chain.simulateContract({
      account: submitter.account.address,
      address: devnet.token.address,
      abi: devnet.token.abi,
      functionName: "mint",
      args: [submitter.account.address, 1n],
    });
    await expect(mint).rejects.toThrow("caller is not the owner");
  });
});
