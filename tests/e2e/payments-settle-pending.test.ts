/**
 * A settlement the facilitator sent but did not see mined (ARCHITECTURE.md §6 "Crashes"): x402's
 * exact EVM facilitator answers `/settle` with 200 `{success: false, errorReason:
 * "settlement_pending", transaction}` when it stops waiting for the receipt. The transfer may
 * still be mined, so the attempt is kept (an unused nonce at that moment proves nothing), the
 * buyer is told to present the same payment again, and doing so after the transfer is mined
 * delivers the data without a second charge.
 *
 * Real parts: the unmodified @x402/evm facilitator (devnet/facilitator.ts, with a 2 s
 * confirmation timeout), anvil with automining paused while `/settle` waits, an x402 client.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPublicClient, http, type Hex } from "viem";
import { startFacilitatorServer, type FacilitatorServer } from "../../devnet/facilitator.ts";
import { PRICES, SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl } from "../support/paying.ts";

/** anvil's dev account 2 (a public test key): its own transaction nonces, apart from the sandbox's facilitator. */
const SIGNER_KEY: Hex = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";

let sandbox: PaidSandbox;
let impatient: FacilitatorServer;

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  impatient = startFacilitatorServer({ rpcUrl: sandbox.devnet.rpcUrl, signerPrivateKey: SIGNER_KEY, confirmationTimeoutMs: 2_000 });
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  await impatient?.stop();
  await sandbox?.stop();
});

test("settlement_pending: the attempt is kept, and the same payment presented after the transfer is mined gets the data with no second charge", async () => {
  const { devnet } = sandbox;
  const chain = createPublicClient({ transport: http(devnet.rpcUrl) });
  const rpc = (method: string, params: unknown[] = []) => chain.request({ method: method as never, params: params as never });
  const server = await sandbox.serve({ facilitatorUrl: impatient.url });
  const funds = 1_000_000n;
  const payer = await newPayer(devnet, funds);
  const sql = "SELECT id, name FROM items WHERE id BETWEEN 20 AND 29";
  const price = 10n * PRICES.perItem.units;
  const mine = <T extends { payer: string }>(rows: T[]) => rows.filter((row) => row.payer.toLowerCase() === payer.address.toLowerCase());

  // The transfer waits in anvil's mempool while the facilitator waits for its receipt, and gives up.
  await rpc("evm_setAutomine", [false]);
  let pending: Response;
  try {
    pending = await payer.fetch(queryUrl(server.url, sql));
  } finally {
    await rpc("evm_setAutomine", [true]);
  }
  const body = (await pending.json()) as { error: string };
  const receipt = decodeHeader(pending.headers.get("PAYMENT-RESPONSE"));
  expect(pending.status).toBe(402);
  expect(receipt).toMatchObject({ success: false, errorReason: "settlement_pending" });
  expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  expect(body.error).toContain("present the same payment again");
  expect(body.error).not.toContain("nothing was charged");
  // Kept as unconfirmed: its outcome is not known yet.
  expect(mine(server.unconfirmedRows())).toHaveLength(1);
  expect(mine(server.ledgerRows())).toHaveLength(0);

  // The transfer is mined: the buyer has paid once.
  await rpc("evm_mine");
  expect(await devnet.balanceOf(payer.address)).toBe(funds - price);

  // The same payment again: served from the transfer found on chain, not charged again.
  const again = await fetch(queryUrl(server.url, sql), { headers: { "PAYMENT-SIGNATURE": payer.signatures.at(-1)! } });
  expect(again.status).toBe(200);
  expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toMatchObject({ success: true, transaction: receipt.transaction });
  expect((await arrowResult(again)).rows).toEqual(sandbox.sqliteRows(sql));
  expect(await devnet.balanceOf(payer.address)).toBe(funds - price);
  expect(mine(server.ledgerRows())).toEqual([expect.objectContaining({ tx_hash: receipt.transaction, amount: String(price) })]);
  expect(mine(server.unconfirmedRows())).toHaveLength(0);
}, 60_000);
