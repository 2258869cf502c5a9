/**
 * The chain read after a failed settlement is bounded as a whole (src/payment/chain.ts): an RPC
 * endpoint that accepts the request and never answers makes the state unknown (null) by the deadline,
 * which never removes an attempt, instead of holding the payment past its claim. The endpoint is a
 * real HTTP server that misbehaves.
 */
import { afterAll, expect, test } from "bun:test";
import { createChainReader } from "../../src/payment/chain.ts";

const never = Promise.withResolvers<void>();
const silent = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch() {
    await never.promise;
    return new Response("late");
  },
});
afterAll(() => {
  never.resolve();
  silent.stop(true);
});

test("an endpoint that never answers: unknown (null) by the deadline, not after every call's own timeout", async () => {
  // Each call alone may take 5 s and is retried once; the whole read gets 300 ms.
  const reader = createChainReader({ 31337: `http://127.0.0.1:${silent.port}` }, 300);
  const ref = { network: "eip155:31337", asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3", from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", nonce: `0x${"11".repeat(32)}`, payTo: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", amount: 1n };
  expect(await reader.paymentState(ref)).toBeNull();
}, 3_000);
