/**
 * The chain read after a failed settlement is bounded as a whole (src/payment/chain.ts): an RPC
 * endpoint that accepts the request and never answers makes the state unknown (null) by the deadline,
 * which never removes an attempt, instead of holding the payment (and its buyer) indefinitely; and
 * a slow endpoint is sent no further call once the deadline has passed. The endpoints are real HTTP
 * servers that misbehave.
 */
import { afterAll, expect, test } from "bun:test";
import { createChainReader } from "../../src/payment/chain.ts";

const ref = {
  network: "eip155:31337",
  asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  nonce: `0x${"11".repeat(32)}`,
  payTo: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  amount: 1n,
};

const never = Promise.withResolvers<void>();
const silent = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch() {
    await never.promise;
    return new Response("late");
  },
});

/** Answers every JSON-RPC call after SLOW_MS: a head of 20,000, the nonce used, and no logs in any window. */
const SLOW_MS = 60;
const calls: { method: string; at: number }[] = [];
const slow = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const { id, method } = (await request.json()) as { id: number; method: string };
    calls.push({ method, at: performance.now() });
    await Bun.sleep(SLOW_MS);
    const result = method === "eth_blockNumber" ? "0x4e20" : method === "eth_call" ? `0x${"0".repeat(63)}1` : method === "eth_getLogs" ? [] : null;
    return Response.json({ jsonrpc: "2.0", id, result });
  },
});

afterAll(() => {
  never.resolve();
  silent.stop(true);
  slow.stop(true);
});

test("an endpoint that never answers: unknown (null) by the deadline, not after every call's own timeout", async () => {
  // Each call alone may take 5 s and is retried once; the whole read gets 300 ms.
  const reader = createChainReader({ 31337: `http://127.0.0.1:${silent.port}` }, 300);
  expect(await reader.paymentState(ref)).toBeNull();
}, 3_000);

test("a slow endpoint: unknown (null) by the deadline, and no call is started after it", async () => {
  // Unhurried, the read would make 2 calls, then 10 log queries for each of two events (10,000
  // blocks in windows of 1,000): ~22 × 60 ms. It gets 400 ms.
  const reader = createChainReader({ 31337: `http://127.0.0.1:${slow.port}` }, 400);
  const started = performance.now();
  expect(await reader.paymentState(ref)).toBeNull();
  const deadline = performance.now();
  expect(deadline - started).toBeLessThan(1_500);
  expect(calls.filter((call) => call.method === "eth_getLogs").length).toBeGreaterThan(0);
  // Long enough for the abandoned read to have made several more calls, had it gone on.
  await Bun.sleep(5 * SLOW_MS);
  // The call in flight at the deadline may still have been sent; none after it.
  expect(calls.filter((call) => call.at > deadline + 5).length).toBe(0);
}, 5_000);
