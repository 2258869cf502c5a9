/**
 * engines/duckdb/collect.ts: chunks read by all reads together spend one budget, and a spent budget
 * collects what nobody holds any more (what a dropped DuckDB chunk's finalizer waits for).
 */
import { expect, test } from "bun:test";
import { chunkRead, COLLECT_AFTER_BYTES } from "../../../src/engines/duckdb/collect.ts";

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
  const rowsPerRead = COLLECT_AFTER_BYTES / 16 / 4 / 2;
  // Two reads of 4 columns, each half the budget: the second one spends it.
  chunkRead(rowsPerRead, 4);
  chunkRead(rowsPerRead, 4);
  await ticks(5);
  expect(probe.finalized()).toBe(true);
});
