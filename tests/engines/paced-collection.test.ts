/**
 * engines/paced-collection.ts: bytes read by all reads together spend one budget, and a spent budget
 * collects what nobody holds any more (what a dropped DuckDB chunk's finalizer waits for, what a
 * PostgreSQL read's sent batches leave behind).
 */
import { expect, test } from "bun:test";
import { bytesRead, COLLECT_AFTER_BYTES, FULL_EVERY, pacedCollections } from "../../src/engines/paced-collection.ts";

/** An object nobody holds once `drop()` is called (at once, unless `held`), and a flag its finalizer sets. */
function dropped(held = false): { finalized: () => boolean; drop: () => void } {
  let finalized = false;
  const registry = new FinalizationRegistry(() => {
    finalized = true;
  });
  let holder: { payload: number[] } | null = { payload: new Array(64).fill(0) };
  registry.register(holder, "dropped");
  if (!held) holder = null;
  // The registry itself must outlive the object, or its callback never runs.
  (globalThis as { keep?: unknown[] }).keep ??= [];
  (globalThis as { keep?: unknown[] }).keep!.push(registry);
  return {
    finalized: () => finalized,
    drop: () => {
      holder = null;
    },
  };
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

test("what was still held at a collection is freed by the next full one", async () => {
  const probe = dropped(true);
  // The last collection a full one, the next an eden one with the object held: it survives that
  // into the old generation, which eden collections leave alone.
  while (pacedCollections() % FULL_EVERY !== 0) bytesRead(COLLECT_AFTER_BYTES);
  bytesRead(COLLECT_AFTER_BYTES);
  probe.drop();
  const freedByEden: boolean[] = [];
  while ((pacedCollections() + 1) % FULL_EVERY !== 0) {
    bytesRead(COLLECT_AFTER_BYTES);
    await ticks(5);
    freedByEden.push(probe.finalized());
  }
  bytesRead(COLLECT_AFTER_BYTES); // the full one
  await ticks(5);
  expect({ freedByEden: freedByEden.some(Boolean), freedByFull: probe.finalized() }).toEqual({ freedByEden: false, freedByFull: true });
});
