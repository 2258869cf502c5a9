/**
 * A paying client that goes away before its response is ready is not charged (ARCHITECTURE.md §6
 * step 7: a failure before settlement is never charged): the server leaves the payment unsettled,
 * and the same payment sent again is then processed and settled exactly once.
 */
import { expect, test } from "bun:test";
import { type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 20 AND 29";
/** Bounds the wait for the first request to finish on the server (it holds the payment until then). */
const MAX_POLLS = 100;

test("a client that disconnects while its paid query is being processed is not charged", async () => {
  const { devnet, proxy } = sandbox;
  const url = queryUrl(server.url, FIXED_SQL);
  const payer = await newPayer(devnet, 1_000_000n);
  const header = encodePayment(await payer.sign(await paymentRequired(url)));
  const payToBefore = await devnet.balanceOf(devnet.payTo);

  // The client gives up while the facilitator is verifying; the server carries on afterwards.
  const client = new AbortController();
  let aborted = false;
  proxy.setBehaviour({
    verify: {
      kind: "hook",
      before: async () => {
        if (aborted) return;
        aborted = true;
        client.abort();
        await Bun.sleep(300); // lets the server notice the closed connection
      },
    },
  });
  proxy.resetCounts();
  const first = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header }, signal: client.signal }).catch((error: Error) => error.name);
  expect(first).toBe("AbortError");

  // The same payment again: refused as "in use" until the first request has finished.
  let again: Response | null = null;
  for (let poll = 0; poll < MAX_POLLS; poll++) {
    const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
    if (response.status === 402 && (await response.clone().json()).error === PAYMENT_MESSAGES.inUse) {
      await Bun.sleep(50);
      continue;
    }
    again = response;
    break;
  }
  expect(again).not.toBeNull();
  const { rows } = await arrowResult(again!);
  expect(rows.map((row) => Number(row.id))).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
  // The abandoned request was verified but never settled; the second one was verified and settled.
  expect(proxy.counts).toMatchObject({ verify: 2, settle: 1 });
  expect(server.ledgerRows()).toHaveLength(1);
  expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + 50_000n);
});
