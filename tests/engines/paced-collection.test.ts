/**
 * engines/paced-collection.ts: bytes read by all reads together spend one budget, and a spent budget
 * collects what nobody holds any more (what a dropped DuckDB chunk's finalizer waits for, what a
 * PostgreSQL read's sent batches leave behind).
 */
import { expect, test } from "bun:test";
import { bytesRead, COLLECT_AFTER_BYTES, pacedCollections } from "../../src/engines/paced-collection.ts";

/** An object nobody holds once this returns, and a flag its finalizer sets. */
function dropped(): { finalized: () => boolean } {
  let finalized = false;
  const registry = new FinalizationRegistry(() => {
    finalized = true;
  });
  (() => registry.register({ payload: new Array(64).fill(0) }, "dropped"))();
  // The registry itself must outlive the object, or its callback never runs.
  (globalThis as { keep?: unknown[] }).keep ??= [];
  (globalThis as { keep?: unknown[] }).keep!.push(registry);
  return { finalized: () => finalized };
}

async function ticks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Bun.sleep(0);
}

test("a spent budget collects, whichever reads spent it", async () => {
  const probe = dropped();
  const before = pacedCollections();
  // Two reads, each half the budget: the second one spends it.
  bytesRead(COLLECT_AFTER_BYTES / 2);
  expect(pacedCollections()).toBe(before);
  bytesRead(COLLECT_AFTER_BYTES / 2);
  expect(pacedCollections()).toBe(before + 1);
  await ticks(5);
  expect(probe.finalized()).toBe(true);
});

test("a budget not yet spent collects nothing", () => {
  bytesRead(COLLECT_AFTER_BYTES); // spent: the next budget starts empty
  const before = pacedCollections();
  for (let i = 0; i < 100; i++) bytesRead(1_000);
  expect(pacedCollections()).toBe(before);
});
