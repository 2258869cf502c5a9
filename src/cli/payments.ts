/** `arrow402 payments`: settled payments and totals per table and token, from the ledger. */
import { existsSync } from "node:fs";
import { openLedger, formatPaymentsReport } from "../payment/ledger.ts";
import { UsageError } from "./args.ts";
import { loadContext } from "./context.ts";

export function payments(configPath: string | undefined, since: string | undefined): number {
  const { config } = loadContext(configPath);
  let sinceDate: Date | undefined;
  if (since !== undefined) {
    sinceDate = new Date(since);
    if (Number.isNaN(sinceDate.getTime())) {
      throw new UsageError(`--since '${since}' is not a date: use an ISO date such as 2026-11-01 or 2026-11-01T12:00:00Z`);
    }
  }
  if (!existsSync(config.ledger.path)) {
    console.log(`No payments yet (no ledger at ${config.ledger.path}).`);
    return 0;
  }
  const ledger = openLedger(config.ledger.path);
  try {
    console.log(formatPaymentsReport(ledger, { since: sinceDate, tokens: config.tokens }));
  } finally {
    ledger.close();
  }
  return 0;
}
