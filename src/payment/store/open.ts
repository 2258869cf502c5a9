/**
 * Opens the payment store the config names (ARCHITECTURE.md §2 `ledger`, §11 "Replicas"): a SQLite
 * file for `ledger.path`, PostgreSQL for `ledger.url`.
 */
import type { LedgerConfig } from "../../config/types.ts";
import type { PaymentStore } from "../store.ts";
import { openPostgresStore } from "./postgres.ts";
import { openSqliteStore } from "./sqlite.ts";

export interface OpenStoreOptions {
  /** How long a claim lives without renewal (default CLAIM_LEASE_MS, leases.ts); shorter in tests. */
  claimLeaseMs?: number;
}

export async function openPaymentStore(ledger: LedgerConfig, options: OpenStoreOptions = {}): Promise<PaymentStore> {
  return ledger.url !== undefined ? await openPostgresStore(ledger.url, options) : openSqliteStore(ledger.path, options);
}
