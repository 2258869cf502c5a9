/**
 * Opens the payment store the config names (ARCHITECTURE.md §2 `ledger`, §11 "Replicas"): a SQLite
 * file for `ledger.path`, PostgreSQL for `ledger.url`.
 */
import type { LedgerConfig } from "../../config/types.ts";
import type { PaymentStore } from "../store.ts";
import { openPostgresStore } from "./postgres.ts";
import { openSqliteStore } from "./sqlite.ts";

export async function openPaymentStore(ledger: LedgerConfig): Promise<PaymentStore> {
  return ledger.url !== undefined ? await openPostgresStore(ledger.url) : openSqliteStore(ledger.path);
}
