/** The per-client allowance of facilitator refusals (src/routes/refused-payments.ts), on a clock of its own. */
import { expect, test } from "bun:test";
import { TooManyRequestsError } from "../../src/errors.ts";
import { RefusedPayments } from "../../src/routes/refused-payments.ts";

test("off (0) or without a client address: no allowance to check", () => {
  expect(new RefusedPayments(0).budgetOf("198.51.100.7")).toBeUndefined();
  expect(new RefusedPayments(2).budgetOf(null)).toBeUndefined();
});

test("past the limit within a minute: 429 until the oldest refusal is a minute old; other addresses are apart", () => {
  let now = 1_000_000;
  const limits = new RefusedPayments(2, () => now);
  const client = limits.budgetOf("198.51.100.7")!;
  client.check();
  client.refused();
  now += 10_000;
  client.check();
  client.refused();
  now += 10_000;
  let refusal: unknown;
  try {
    client.check();
  } catch (error) {
    refusal = error;
  }
  expect(refusal).toBeInstanceOf(TooManyRequestsError);
  expect((refusal as TooManyRequestsError).retryAfterSeconds).toBe(40);
  expect((refusal as Error).message).toContain("retry in 40 s");
  // Another address, and the same address in a later request, share nothing but the address.
  expect(() => limits.budgetOf("203.0.113.9")!.check()).not.toThrow();
  expect(() => limits.budgetOf("198.51.100.7")!.check()).toThrow(TooManyRequestsError);
  now += 40_001;
  expect(() => client.check()).not.toThrow();
});
