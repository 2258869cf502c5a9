/**
 * `arrow402 payments`: settled payments, totals per table and token, and unconfirmed attempts,
 * from the payment store the config names (a SQLite file or PostgreSQL, DESIGN.md §11).
 */
import { existsSync } from "node:fs";
import { formatPaymentsReport } from "../payment/report.ts";
import { openPaymentStore } from "../payment/store/open.ts";
import { UsageError } from "./args.ts";
import { loadContext } from "./context.ts";

export async function payments(configPath: string | undefined, since: string | undefined): Promise<number> {
  const { config } = loadContext(configPath);
  let sinceDate: Date | undefined;
  if (since !== undefined) {
    sinceDate = new Date(since);
    if (Number.isNaN(sinceDate.getTime())) {
      throw new UsageError(`--since '${since}' is not a date: use an ISO date such as 2026-11-01 or 2026-11-01T12:00:00Z`);
    }
  }
  // Reading must not create a SQLite ledger where the server never wrote one.
  if (config.ledger.path !== undefined && !existsSync(config.ledger.path)) {
    console.log(`No payments yet (no ledger at ${config.ledger.path}).`);
    return 0;
  }
  const store = await openPaymentStore(config.ledger);
  try {
    console.log(await formatPaymentsReport(store, { since: sinceDate, tokens: config.tokens }));
  } finally {
    await store.close();
  }
  return 0;
}
