/**
 * The `ledger:` section (ARCHITECTURE.md §2, §11 "Replicas"): where the payment state lives. Exactly one
 * of `path` (a local SQLite file, the default) or `url` (a PostgreSQL database shared by replicas).
 * A URL may carry a password, so messages never repeat it.
 */
import { resolve } from "node:path";
import type { ConfigPath, Problems } from "./problems.ts";
import { DEFAULTS } from "./schema.ts";
import type { LedgerConfig } from "./types.ts";

const URL_EXAMPLE = "postgres://arrow402:${LEDGER_PASSWORD}@db.example:5432/arrow402";

/** Undefined when a problem was recorded (here or by the schema). */
export function resolveLedger(
  ledger: Record<string, unknown> | undefined,
  baseDir: string,
  databasePaths: readonly string[],
  problems: Problems,
): LedgerConfig | undefined {
  if (ledger === undefined) return undefined;
  const { path, url } = ledger;
  if (path === "" || url === "") return undefined; // reported by the schema
  if (typeof path === "string" && typeof url === "string") {
    problems.add(["ledger"], "has both path and url; keep one: path for a local SQLite ledger, url for a PostgreSQL ledger shared by replicas");
    return undefined;
  }
  if (typeof url === "string") return checkPostgresUrl(url, ["ledger", "url"], problems) ? { url } : undefined;

  const ledgerPath = resolve(baseDir, typeof path === "string" ? path : DEFAULTS.ledgerPath);
  if (databasePaths.includes(ledgerPath)) {
    problems.add(["ledger", "path"], "is the published database; the ledger needs its own file, e.g. ./arrow402-ledger.sqlite");
    return undefined;
  }
  return { path: ledgerPath };
}

/** Whether `text` is a postgres:// URL naming a database; otherwise a problem at `path` says what to write. */
export function checkPostgresUrl(text: string, path: ConfigPath, problems: Problems, example = URL_EXAMPLE): boolean {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "postgres:" && url.protocol !== "postgresql:")) {
    const scheme = url === undefined ? "" : ` (it starts with ${url.protocol})`;
    problems.add(path, `is not a postgres:// or postgresql:// URL${scheme}; write e.g. ${example}`);
    return false;
  }
  if (url.pathname.replace(/^\//, "") === "") {
    problems.add(path, `names no database; add it after the host, e.g. ${example}`);
    return false;
  }
  return true;
}
