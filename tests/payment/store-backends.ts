/**
 * The payment stores under test, for `describe.each`: a SQLite file and a real PostgreSQL database
 * (tests/support/postgres.ts), each fresh per test, plus what the tests write into them.
 */
import { afterAll, afterEach } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { LedgerConfig } from "../../src/config/types.ts";
import type { PaymentStore, Settlement, SettlementAttempt } from "../../src/payment/store.ts";
import { openPaymentStore, type OpenStoreOptions } from "../../src/payment/store/open.ts";
import { usePostgres } from "../support/postgres.ts";
import { tempDir } from "../support/fixtures.ts";
import { OTHER_PAY_TO, PAY_TO, USDC_BASE_SEPOLIA } from "./fixtures.ts";

export interface StoreBackend {
  name: "sqlite" | "postgres";
  /** Fresh, empty payment state; every call of `open` is one more process-like handle on it. */
  fresh(): Promise<{ ledger: LedgerConfig; open(options?: OpenStoreOptions): Promise<PaymentStore> }>;
}

/** Registers the hooks (a PostgreSQL server for the file, stores closed after each test); call at the top of a test file. */
export function storeBackends(): StoreBackend[] {
  const postgres = usePostgres();
  const dir = tempDir("arrow402-store-");
  const opened: PaymentStore[] = [];
  let files = 0;

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const opener = (ledger: LedgerConfig) => async (options?: OpenStoreOptions) => {
    const store = await openPaymentStore(ledger, options);
    opened.push(store);
    return store;
  };
  return [
    {
      name: "sqlite",
      async fresh() {
        files += 1;
        const ledger = { path: join(dir, `ledger-${files}.sqlite`) };
        return { ledger, open: opener(ledger) };
      },
    },
    {
      name: "postgres",
      async fresh() {
        const ledger = { url: await postgres.server.createDatabase() };
        return { ledger, open: opener(ledger) };
      },
    },
  ];
}

let counter = 0;

/** A settlement attempt with unique key, nonce and payment id. */
export function attempt(extra: Partial<SettlementAttempt> = {}): SettlementAttempt {
  counter += 1;
  const nonce = `0x${counter.toString(16).padStart(64, "0")}`;
  return {
    attemptedAt: new Date(Date.UTC(2026, 0, 1, 12, 0, counter)),
    tableName: "swaps",
    resourceUrl: `http://localhost:4021/api/query?query=SELECT+${counter}`,
    query: `SELECT ${counter}`,
    rows: counter * 10,
    amount: 4000n,
    asset: USDC_BASE_SEPOLIA.address,
    network: USDC_BASE_SEPOLIA.network,
    payer: OTHER_PAY_TO,
    payTo: PAY_TO,
    paymentKey: `${USDC_BASE_SEPOLIA.network}|${USDC_BASE_SEPOLIA.address}|${OTHER_PAY_TO}|${nonce}`.toLowerCase(),
    paymentId: `pay_${counter.toString().padStart(16, "0")}`,
    validBefore: 2n ** 255n + BigInt(counter),
    signedPayload: JSON.stringify({ signature: `0x${"00".repeat(65)}`, authorization: { nonce } }),
    ...extra,
  };
}

export function settlement(extra: Partial<Settlement> = {}): Settlement {
  return { transaction: `0x${"ab".repeat(32)}`, payer: OTHER_PAY_TO, settledAt: new Date(Date.UTC(2026, 1, 1)), rows: 5, answer: null, ...extra };
}

/** Begins and confirms a payment settled at `settledAt`. */
export async function settle(store: PaymentStore, paid: SettlementAttempt, settledAt: Date, extra: Partial<Settlement> = {}): Promise<void> {
  await store.begin(paid);
  await store.confirm(paid.paymentKey, settlement({ settledAt, rows: paid.rows, ...extra }));
}
