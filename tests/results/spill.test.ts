/**
 * Spill files (results/spill.ts): bytes are written off the HTTP thread, in order, and become readable
 * (and release their producer) only once on file; closing frees the budget at once, whatever is
 * still being written.
 */
import { expect, test } from "bun:test";
import { SpillBudget, SpillFile } from "../../src/results/spill.ts";

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

test("appended bytes are queued at once, readable once written, and read back in order", async () => {
  const budget = new SpillBudget(64 << 20);
  const spill = new SpillFile(budget);
  const written: number[] = [];
  const onFile = [1, 2, 3].map((n) => new Promise<void>((resolve) => expect(spill.append([bytes(4 << 20, n), bytes(10, n)], () => (written.push(n), resolve()))).toBe(true)));
  // Nothing is on file when append returns: the writes run off this thread.
  expect({ queued: spill.queuedBytes, pending: spill.pending, next: spill.next(), budget: budget.usedBytes }).toEqual({
    queued: 3 * ((4 << 20) + 10),
    pending: 0,
    next: null,
    budget: 3 * ((4 << 20) + 10),
  });
  await Promise.all(onFile);
  expect(written).toEqual([1, 2, 3]);
  expect({ queued: spill.queuedBytes, pending: spill.pending }).toEqual({ queued: 0, pending: 3 * ((4 << 20) + 10) });
  const read: Uint8Array[] = [];
  for (let chunk = spill.next(); chunk !== null; chunk = spill.next()) read.push(chunk);
  const all = Buffer.concat(read);
  expect(all.length).toBe(3 * ((4 << 20) + 10));
  expect([all[0], all[(4 << 20) + 9], all[(4 << 20) + 10], all[all.length - 1]]).toEqual([1, 1, 2, 3]);
  expect(budget.usedBytes).toBe(0);
  spill.close();
});

test("closed while bytes are still being written: the budget is freed, nothing more is written or reported", async () => {
  const budget = new SpillBudget(64 << 20);
  let failed: Error | null = null;
  const spill = new SpillFile(budget, (error) => (failed = error));
  let written = 0;
  for (let i = 0; i < 8; i++) spill.append([bytes(4 << 20, i)], () => written++);
  spill.close();
  expect(budget.usedBytes).toBe(0);
  await Bun.sleep(200);
  expect({ written, failed, next: spill.next(), append: spill.append([bytes(1, 1)]) }).toEqual({ written: 0, failed: null, next: null, append: false });
});

test("past the budget nothing is queued", () => {
  const spill = new SpillFile(new SpillBudget(1 << 20));
  expect(spill.append([bytes(1 << 20, 1)])).toBe(true);
  expect(spill.append([bytes(1, 1)])).toBe(false);
  spill.close();
});

test("a file that leaves part of the budget free stops there; a file that does not can use that part", () => {
  const budget = new SpillBudget(4 << 20);
  const stalled = new SpillFile(budget, () => {}, 1 << 20);
  expect([1, 2, 3, 4].map((n) => stalled.append([bytes(1 << 20, n)]))).toEqual([true, true, true, false]);
  const paid = new SpillFile(budget);
  expect([paid.append([bytes(1 << 20, 5)]), paid.append([bytes(1, 6)])]).toEqual([true, false]);
  stalled.close();
  paid.close();
  expect(budget.usedBytes).toBe(0);
});
