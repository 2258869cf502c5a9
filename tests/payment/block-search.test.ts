/**
 * `payments --reconcile` bounds its log search by the blocks mined between an attempt and its
 * validBefore (authorization-check.ts `firstBlockAtOrAfter`). On a real anvil chain with steady,
 * bunched and jumping block times, the search returns what reading every block would, and a steady
 * chain costs a few `getBlock` calls, not a binary search's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPublicClient, http, type PublicClient } from "viem";
import { startChain, type Chain } from "../../devnet/chain.ts";
import { firstBlockAtOrAfter } from "../../src/payment/authorization-check.ts";

let chain: Chain;
let client: PublicClient;
let requests = 0;

beforeAll(async () => {
  chain = await startChain();
  client = createPublicClient({ transport: http(chain.rpcUrl, { onFetchRequest: () => void requests++ }) });
});

afterAll(async () => {
  await chain?.stop();
});

const rpc = (method: string, params: unknown[]) => client.request({ method: method as never, params: params as never });
const hex = (n: number) => `0x${n.toString(16)}`;

/** Every block's timestamp, read one by one. */
async function allTimes(): Promise<bigint[]> {
  const head = await client.getBlockNumber();
  const times: bigint[] = [];
  for (let n = 0n; n <= head; n++) times.push((await client.getBlock({ blockNumber: n })).timestamp);
  return times;
}

/** The search's answer and its RPC calls, against the first block at or after `seconds` found by reading them all. */
async function search(times: bigint[], seconds: bigint) {
  const head = { number: BigInt(times.length - 1), timestamp: times.at(-1)! };
  const expected = times.findIndex((time) => time >= seconds);
  requests = 0;
  const found = await firstBlockAtOrAfter(client, seconds, head);
  expect(found).toBe(expected < 0 ? head.number + 1n : BigInt(expected));
  return requests;
}

/** Times around every distinct timestamp, before the first and after the last. */
function targets(times: bigint[]): bigint[] {
  const distinct = [...new Set(times)];
  return [...new Set([distinct[0]! - 100n, ...distinct.flatMap((time) => [time - 1n, time, time + 1n]), distinct.at(-1)! + 100n])];
}

test("a steady chain (one block every 2 s): the right block, in at most 4 calls where a binary search takes 10", async () => {
  await rpc("anvil_mine", [hex(1_000), hex(2)]);
  const times = await allTimes();
  expect(times.length).toBeGreaterThan(1_000);
  let most = 0;
  for (const seconds of targets(times).filter((_, i) => i % 7 === 0)) most = Math.max(most, await search(times, seconds));
  expect(most).toBeGreaterThan(0);
  expect(most).toBeLessThanOrEqual(4);
});

test("an uneven chain (blocks in the same second, a jump of an hour): the right block, within twice a binary search", async () => {
  await rpc("anvil_mine", [hex(500), hex(0)]);
  await rpc("evm_increaseTime", [3_600]);
  await rpc("anvil_mine", [hex(300), hex(12)]);
  await rpc("anvil_mine", [hex(200), hex(0)]);
  const times = await allTimes();
  const bound = 2 * Math.ceil(Math.log2(times.length)) + 2;
  let most = 0;
  for (const seconds of targets(times)) most = Math.max(most, await search(times, seconds));
  expect(most).toBeLessThanOrEqual(bound);
});
