/** The idle timeout set once a response is handed over (src/ops/keep-alive.ts). */
import { expect, test } from "bun:test";
import { idleSecondsAfter, MAX_IDLE_SECONDS } from "../../src/ops/keep-alive.ts";

test.each([
  ["nothing left to send: the keep-alive time", 75, 0, 75],
  ["a body handed over whole: time to send it at 64 KiB/s too", 75, 1024 * 1024, 75 + 16],
  ["a part of a second counts as a second", 75, 1, 76],
  ["up to Bun's bound", 75, (MAX_IDLE_SECONDS - 75) * 64 * 1024, MAX_IDLE_SECONDS],
  ["past it: no timeout, so a large result is never cut while it is read", 75, (MAX_IDLE_SECONDS - 75) * 64 * 1024 + 1, 0],
])("%s", (_name, keepAlive, bytes, expected) => {
  expect(idleSecondsAfter(keepAlive, bytes)).toBe(expected);
});
