/**
 * Held paid results (results/held-result.ts): the first bytes stay in memory, the rest go to a spill
 * file, and a chunk the spill budget has no room for is refused (the purchase is then refused);
 * read back, the result is the bytes in the order they came. Released, it frees its share of the
 * budget.
 */
import { expect, test } from "bun:test";
import { HeldResult } from "../../src/results/held-result.ts";
import { UnsentBytes } from "../../src/results/sent-body.ts";
import { rowsOfBody } from "../../src/results/result-stream.ts";
import { SpillBudget, SpillFile } from "../../src/results/spill.ts";

const chunk = (n: number) => new Uint8Array(1_000).fill(n);
const sending = (budget: SpillBudget) => ({ stallMs: 250, sendTimeoutMs: 60_000, budget, unsent: new UnsentBytes(1 << 30) });

test.each([
  // [spill budget, chunks in memory before the file, chunks held in all]
  ["room for every chunk", 1_000_000, 3, 10],
  ["room for four chunks on file", 4_000, 3, 7],
  ["no room at all", 0, 3, 3],
])("%s: held in order until a chunk finds no room", async (_, budgetBytes, head, kept) => {
  const budget = new SpillBudget(budgetBytes);
  const held = new HeldResult(sending(budget), 3_000);
  const added = Array.from({ length: 10 }, (_, n) => held.add(chunk(n)));
  // A chunk that finds no room is refused, and so is every one after it (the budget stays full).
  expect(added).toEqual(Array.from({ length: 10 }, (_, n) => n < kept));
  await held.ready();
  expect(held.spilled).toBe(kept > head);
  expect(budget.usedBytes).toBe((kept - head) * 1_000);
  if (!held.spilled) {
    expect(held.chunks.map((bytes) => bytes[0])).toEqual(Array.from({ length: head }, (_, n) => n));
    return;
  }
  const body = held.body(42);
  expect(rowsOfBody(body)).toBe(42);
  const read = new Uint8Array(await new Response(body).arrayBuffer());
  expect(read.byteLength).toBe(kept * 1_000);
  expect(Array.from({ length: kept }, (_, n) => read[n * 1_000])).toEqual(Array.from({ length: kept }, (_, n) => n));
  expect(budget.usedBytes).toBe(0);
});

test("a small chunk after the file has begun goes to the file too, and so does everything after it", async () => {
  const budget = new SpillBudget(1_000_000);
  const held = new HeldResult(sending(budget), 3_000);
  // 2,000 bytes in memory, the next 2,000 over the limit; the third chunk would fit beside the first.
  for (const size of [2_000, 2_000, 500, 2_000, 2_000]) held.add(new Uint8Array(size).fill(size % 255));
  await held.ready();
  expect(budget.usedBytes).toBe(6_500);
  const read = new Uint8Array(await new Response(held.body(5)).arrayBuffer());
  expect([read.byteLength, read[0], read[2_000], read[4_000], read[4_500], read[8_499]]).toEqual([8_500, 2_000 % 255, 2_000 % 255, 500 % 255, 2_000 % 255, 2_000 % 255]);
});

test("once a chunk is refused, every later one is too, even when room comes back: the result has a gap", async () => {
  const budget = new SpillBudget(2_000);
  const other = new SpillFile(budget);
  expect(other.append([chunk(9)])).toBe(true);
  const held = new HeldResult(sending(budget), 0);
  expect([held.add(chunk(0)), held.add(chunk(1))]).toEqual([true, false]);
  other.close();
  expect(held.add(chunk(2))).toBe(false);
  held.release();
  expect(budget.usedBytes).toBe(0);
});

/** Five chunks held: the first in memory, four on file. */
async function fiveChunksHeld() {
  const budget = new SpillBudget(1_000_000);
  const held = new HeldResult(sending(budget), 1_000);
  for (let n = 0; n < 5; n++) held.add(chunk(n));
  await held.ready();
  return { budget, held };
}

test("released before it is sent (the payment was refused): its spill budget is freed", async () => {
  const { budget, held } = await fiveChunksHeld();
  expect(budget.usedBytes).toBe(4_000);
  held.release();
  expect(budget.usedBytes).toBe(0);
});

test("a body cancelled half-way (the buyer left) frees its spill budget", async () => {
  const { budget, held } = await fiveChunksHeld();
  const reader = held.body(5).getReader();
  expect((await reader.read()).value?.[0]).toBe(0);
  await reader.cancel();
  expect(budget.usedBytes).toBe(0);
});
