/**
 * A PostgreSQL ledger that stops answering without closing its connections (every server process
 * stopped with SIGSTOP, as behind a network partition): each store call gives up after the call
 * timeout with LedgerUnavailableError (503, nothing charged) instead of holding the request
 * forever, and the store works again once the server answers.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LedgerUnavailableError } from "../../src/errors.ts";
import type { PaymentStore } from "../../src/payment/store.ts";
import { openPostgresStore } from "../../src/payment/store/postgres.ts";
import { usePostgres } from "../support/postgres.ts";
import { attempt } from "./store-backends.ts";

const postgres = usePostgres();
const CALL_TIMEOUT_MS = 500;
let store: PaymentStore;

beforeAll(async () => {
  store = await openPostgresStore(postgres.url, { callTimeoutMs: CALL_TIMEOUT_MS });
});

afterAll(async () => {
  postgres.server.thaw();
  await store?.close();
});

test("a silent server: every call is refused as unavailable after the call timeout, then works again once it answers", async () => {
  const recorded = attempt();
  await store.begin(recorded);
  postgres.server.freeze();
  try {
    const calls: [string, () => Promise<unknown>][] = [
      ["ping", () => store.ping()],
      ["claim", () => store.claim(recorded.paymentKey)],
      ["find", () => store.find(recorded.paymentKey)],
      ["begin", () => store.begin(attempt())],
      ["confirm", () => store.confirm(recorded.paymentKey, { transaction: "0x01", payer: recorded.payer, settledAt: new Date(), rows: 1, answer: null })],
      ["unconfirmed", () => store.unconfirmed()],
    ];
    const outcomes = await Promise.all(
      calls.map(async ([name, call]) => {
        const started = performance.now();
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        return { name, error, ms: performance.now() - started };
      }),
    );
    for (const { name, error, ms } of outcomes) {
      // What else came back (an answer, another error) is shown when it is not the refusal.
      const outcome = error instanceof LedgerUnavailableError ? "unavailable" : error === undefined ? "answered" : String(error);
      expect({ name, outcome }).toEqual({ name, outcome: "unavailable" });
      expect(ms).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(CALL_TIMEOUT_MS + 2_000);
    }
  } finally {
    postgres.server.thaw();
  }
  // Answering again: the calls given up on may have run late; the store serves new calls as before.
  await store.ping();
  expect((await store.find(recorded.paymentKey))?.paymentKey).toBe(recorded.paymentKey);
  const fresh = attempt();
  await store.begin(fresh);
  expect((await store.find(fresh.paymentKey))?.status).toBe("settling");
}, 30_000);
