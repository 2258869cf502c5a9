/** The per-client allowance of facilitator refusals (src/routes/refused-payments.ts), on a clock of its own. */
import { expect, test } from "bun:test";
import { TooManyRequestsError } from "../../src/errors.ts";
import { ClientCounts } from "../../src/routes/client-limit.ts";
import { RefusedPayments } from "../../src/routes/refused-payments.ts";

test("off (0) or without a client address: no budget", () => {
  expect(new RefusedPayments(0).budgetOf("198.51.100.7")).toBeUndefined();
  expect(new RefusedPayments(2).budgetOf(null)).toBeUndefined();
});

test("every place taken (refused, or still being checked): 429 until the oldest is a minute old; other addresses are apart", () => {
  let now = 1_000_000;
  const limits = new RefusedPayments(2, () => now);
  const client = limits.budgetOf("198.51.100.7")!;
  client.take(); // refused: kept
  now += 10_000;
  client.take(); // still in flight: counts too, so a burst cannot pass
  now += 10_000;
  let refusal: unknown;
  try {
    client.take();
  } catch (error) {
    refusal = error;
  }
  expect(refusal).toBeInstanceOf(TooManyRequestsError);
  expect((refusal as TooManyRequestsError).retryAfterSeconds).toBe(40);
  expect((refusal as Error).message).toContain("retry in 40 s");
  expect(() => limits.budgetOf("203.0.113.9")!.take()).not.toThrow();
  now += 40_001;
  expect(() => client.take()).not.toThrow();
});

test("a place given back (the payment was valid, or the facilitator failed) is free again at once", () => {
  const limits = new RefusedPayments(1, () => 5_000_000);
  const client = limits.budgetOf("198.51.100.7")!;
  const giveBack = client.take();
  expect(() => client.take()).toThrow(TooManyRequestsError);
  giveBack();
  expect(() => client.take()).not.toThrow();
});

test("the refusals are the server's, not one config's: the app a reload builds sees them, under its own limit", () => {
  const counts = new ClientCounts();
  const now = () => 7_000_000;
  new RefusedPayments(2, now, counts.refusedPayments).budgetOf("198.51.100.7")!.take();
  const reloaded = (max: number) => new RefusedPayments(max, now, counts.refusedPayments).budgetOf("198.51.100.7")!;
  expect(() => reloaded(1).take()).toThrow(TooManyRequestsError);
  expect(() => reloaded(2).take()).not.toThrow();
});
