/**
 * A free arrow402 on a real listening server for the operations tests: the types fixture database
 * plus `big`, a table large enough that its export streams (more than the first 32,768 rows) and
 * outgrows the loopback socket's buffers (~20 MB), so a client that stops reading stops the server.
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";
import { createTypesDatabase, PAY_TO, tempDir } from "../support/fixtures.ts";
import { parseExposition, type Exposition } from "./exposition.ts";

export const BIG_ROWS = 250_000;

/** A folder holding `types.sqlite` (kinds, items, cheap_items, big); remove it with `removeFixture`. */
export function opsFixture(): string {
  const dir = tempDir("arrow402-ops-");
  const path = join(dir, "types.sqlite");
  createTypesDatabase(path);
  const db = new Database(path, { readwrite: true });
  db.run("CREATE TABLE big (id INTEGER PRIMARY KEY, label TEXT)");
  db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${BIG_ROWS}) INSERT INTO big SELECT i, 'row-' || i || '-' || hex(zeroblob(32)) FROM n`);
  db.close();
  return dir;
}

export function removeFixture(dir: string | undefined): void {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}

/** The raw config the operations tests start from: free kinds and big, items paid per row. */
export function opsRawConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    server: { bind: "127.0.0.1:0" },
    database: { sqlite: "types.sqlite" },
    ledger: { path: "ledger.sqlite" },
    tables: [
      { name: "kinds", description: "Free" },
      { name: "big", description: "Free and large" },
      { name: "items", price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.001" }] },
    ],
    ...overrides,
  };
}

export function opsConfig(dir: string, overrides: Record<string, unknown> = {}, env: Record<string, string> = {}): Config {
  return resolveConfig(opsRawConfig(overrides), { baseDir: dir, env });
}

/** Scrapes /metrics and parses it strictly. */
/** One unlabelled series of a server's /metrics, or NaN when it has none. */
export async function metricValue(url: string, name: string): Promise<number> {
  return (await scrape(url)).value(name, {}) ?? Number.NaN;
}

export async function scrape(url: string, token?: string): Promise<Exposition> {
  const response = await fetch(`${url}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${await response.text()}`);
  return parseExposition(await response.text());
}

export const queryPath = (sql: string) => `/api/query?query=${encodeURIComponent(sql)}`;
