/**
 * `arrow402 payments`: settled payments, totals per table and token, and unconfirmed attempts,
 * from the payment store the config names (a SQLite file or PostgreSQL, ARCHITECTURE.md §11).
 * With `--reconcile`, every unconfirmed attempt is resolved through the chain first (§6 "Crashes",
 * payment/reconcile.ts).
 */
import { existsSync } from "node:fs";
import { createAuthorizationChecker } from "../payment/authorization-check.ts";
import { reconcileAttempts } from "../payment/reconcile.ts";
import { formatPaymentsReport, formatReconciliation } from "../payment/report.ts";
import { openPaymentStore } from "../payment/store/open.ts";
import { UsageError } from "./args.ts";
import { loadContext } from "./context.ts";

export interface PaymentsOptions {
  since?: string;
  reconcile?: boolean;
}

export async function payments(configPath: string | undefined, options: PaymentsOptions = {}): Promise<number> {
  const { config } = loadContext(configPath);
  if (options.reconcile === true && options.since !== undefined) {
    throw new UsageError("--since selects settled payments to list; --reconcile resolves every unconfirmed attempt: use one or the other");
  }
  let sinceDate: Date | undefined;
  if (options.since !== undefined) {
    sinceDate = new Date(options.since);
    if (Number.isNaN(sinceDate.getTime())) {
      throw new UsageError(`--since '${options.since}' is not a date: use an ISO date such as 2026-11-01 or 2026-11-01T12:00:00Z`);
    }
  }
  // Reading must not create a SQLite ledger where the server never wrote one.
  if (config.ledger.path !== undefined && !existsSync(config.ledger.path)) {
    console.log(`No payments yet (no ledger at ${config.ledger.path}).`);
    return 0;
  }
  const store = await openPaymentStore(config.ledger);
  try {
    if (options.reconcile !== true) {
      console.log(await formatPaymentsReport(store, { since: sinceDate, tokens: config.tokens }));
      return 0;
    }
    const steps = await reconcileAttempts({ store, chain: createAuthorizationChecker(config.rpcUrls) });
    process.stdout.write(formatReconciliation(steps, store.location, config.tokens));
    return steps.some((step) => step.outcome === "failed") ? 1 : 0;
  } finally {
    await store.close();
  }
}
