/**
 * Fixtures for the dashboard tests: a generated market database (timestamp, numeric and text
 * columns), configs built by the real config resolver, a real listening server and a raw HTTP
 * client (fetch would normalise `..` and `%2e%2e` before they reach the server).
 */
import { Database } from "bun:sqlite";
import { tempDir as sharedTempDir } from "../support/fixtures.ts";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";
import type { TableEngine } from "../../src/engines/engine.ts";
import { openEngines } from "../../src/engines/sources.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../src/engines/sqlite/catalog.ts";

export const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
export const PAIRS = ["ETH/USDC", "WBTC/USDC", "ARB/ETH", "OP/USDC"];
export const SWAP_COLUMNS = ["id", "ts", "pair", "amount_usd", "fee_units", "note"];

export function tempDir(prefix = "arrow402-dash-"): string {
  return sharedTempDir(prefix);
}

/** `swaps`: one row every 7 minutes from 2026-01-01, amounts and pairs from a fixed-seed generator. */
export function createMarketDatabase(path: string, swaps = 1200): void {
  const db = new Database(path, { create: true, strict: true });
  db.run(`CREATE TABLE swaps (id INTEGER PRIMARY KEY, ts TIMESTAMP NOT NULL, pair TEXT NOT NULL,
    amount_usd REAL, fee_units INTEGER, note TEXT)`);
  db.run(`CREATE TABLE blocks (number INTEGER PRIMARY KEY, hash TEXT NOT NULL)`);
  // Hostile identifiers and values, for the escaping tests.
  db.run(`CREATE TABLE "odd<table>" ("</script><b>col" TEXT, "it's" INTEGER)`);
  db.run(`INSERT INTO "odd<table>" VALUES ('</script><script>alert(1)</script>', 1), ('<b>bold</b>', 2)`);
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const insert = db.prepare("INSERT INTO swaps VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  const start = Date.UTC(2026, 0, 1);
  db.transaction(() => {
    for (let i = 1; i <= swaps; i++) {
      const ts = new Date(start + i * 7 * 60_000).toISOString();
      const amount = i % 50 === 0 ? null : Math.round(random() * 100_000) / 100;
      insert.run(i, ts, PAIRS[Math.floor(random() * PAIRS.length)]!, amount, Math.floor(random() * 3000), `swap #${i}`);
    }
    for (let n = 1; n <= 10; n++) db.run("INSERT INTO blocks VALUES (?1, ?2)", [n, `0x${n.toString(16).padStart(64, "0")}`]);
  })();
  db.close();
}

export interface DashboardsSetup {
  dir: string;
  root: string;
  config: Config;
  db: Database;
  catalog: Catalog;
}

/** A fresh directory with the market database and a config whose dashboards are `entries`. */
export function setupDashboards(entries: unknown[], overrides: Record<string, unknown> = {}): DashboardsSetup {
  const dir = tempDir();
  createMarketDatabase(join(dir, "market.sqlite"));
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0", base_url: "http://data.example:4021" },
      database: { sqlite: "market.sqlite" },
      ledger: { path: "ledger.sqlite" },
      tables: [
        {
          name: "swaps",
          description: "DEX swaps",
          columns: { amount_usd: "Swap size in US dollars" },
          price_tags: [
            { type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.002", is_default: true },
            { type: "fixed", pay_to: PAY_TO, token: "usdc/base", amount: "1" },
          ],
        },
        { name: "blocks", description: "Block hashes" },
      ],
      dashboards: { root: "dashboards", entries },
      ...overrides,
    },
    { baseDir: dir, env: {} },
  );
  const db = openReadOnly((config.databases.main as { path: string }).path);
  const { catalog, problems } = readCatalog(db, config.tables);
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return { dir, root: config.dashboards?.root ?? "", config, db, catalog };
}

/** `run` with the engines of the config's sources (as `arrow402 dashboards` opens them), closed after. */
export async function withEngines<T>(config: Config, run: (engines: ReadonlyMap<string, TableEngine>) => Promise<T>): Promise<T> {
  const engines = openEngines(config, { workers: 1 });
  try {
    return await run(engines);
  } finally {
    for (const engine of engines.values()) engine.close();
  }
}

export function listen(app: { handle(request: Request): Promise<Response> }): { port: number; url: string; stop: () => void } {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => app.handle(request) });
  const port = server.port ?? 0;
  return { port, url: `http://127.0.0.1:${port}`, stop: () => server.stop(true) };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends the request line exactly as given, so the path reaches the server un-normalised. */
export function rawGet(port: number, target: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(socket) {
          socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
        },
        data(_socket, data) {
          chunks.push(Buffer.from(data));
        },
        close() {
          const text = Buffer.concat(chunks).toString("utf8");
          const [head = "", ...rest] = text.split("\r\n\r\n");
          const [statusLine = "", ...headerLines] = head.split("\r\n");
          const headers: Record<string, string> = {};
          for (const line of headerLines) {
            const colon = line.indexOf(":");
            if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
          }
          resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
        },
        error(_socket, error) {
          reject(error);
        },
      },
    }).catch(reject);
  });
}
