/**
 * A paid arrow402 for the end-to-end payment tests: the devnet (anvil, the EIP-3009 test token, a
 * real x402 facilitator) behind a counting proxy, and real listening servers whose config prices
 * the fixture tables in the devnet token. One sandbox per test file (starting the chain takes
 * seconds); each `serve()` gets its own ledger file and YAML config file, so tests never see each
 * other's payments.
 */
import { afterAll, beforeAll, beforeEach } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPublicClient, erc20Abi, http, parseEventLogs, type Hex } from "viem";
import { startDevnet, startFacilitatorProxy, type Devnet, type FacilitatorProxy } from "../../devnet/index.ts";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";
import type { EventBus } from "../../src/ops/events.ts";
import { startServer } from "../../src/server.ts";
import { createTypesDatabase, tempDir } from "./fixtures.ts";

/** Starting the devnet compiles the token with solc-js: hooks need more than the default 5 s. */
export const SANDBOX_START_TIMEOUT_MS = 60_000;

export const TOKEN_KEY = "usdc/devnet";
export const TOKEN_SYMBOL = "tUSDC";

/**
 * The prices the default tables are sold at, as written in the config (decimal token units) and
 * as they must appear on the wire (smallest units, 6 decimals).
 */
export const PRICES = {
  perItem: { config: "0.001", units: 1000n },
  bulkPerItem: { config: "0.0005", units: 500n },
  bulkMinItems: 100,
  cheapPerItem: { config: "0.0001", units: 100n },
  cheapMinTotal: { config: "0.002", units: 2000n },
  flat: { config: "0.05", units: 50_000n },
  metadata: { config: "0.01", units: 10_000n },
} as const;

export const QUERY_DESCRIPTION = "Query execution payment";
export const FLAT_DESCRIPTION = "Any query, flat";

/**
 * items (200 rows): per_row with a cheaper bulk tier listed second, and a metadata price.
 * cheap_items (view, 39 rows): per_row with a minimum total. flat_items (view of items): fixed.
 * kinds: free.
 */
export function defaultTables(payTo: string): unknown[] {
  const tag = (fields: Record<string, unknown>) => ({ pay_to: payTo, token: TOKEN_KEY, ...fields });
  return [
    { name: "kinds", description: "Free" },
    {
      name: "items",
      description: "Paid per row",
      price_tags: [
        tag({ type: "per_row", amount_per_item: PRICES.perItem.config, is_default: true }),
        tag({ type: "per_row", amount_per_item: PRICES.bulkPerItem.config, min_items: PRICES.bulkMinItems, description: "Bulk rate" }),
        tag({ type: "metadata_price", amount: PRICES.metadata.config }),
      ],
    },
    {
      name: "cheap_items",
      description: "Paid per row with a minimum",
      price_tags: [tag({ type: "per_row", amount_per_item: PRICES.cheapPerItem.config, min_total_amount: PRICES.cheapMinTotal.config })],
    },
    {
      name: "flat_items",
      description: "Paid per query",
      price_tags: [tag({ type: "fixed", amount: PRICES.flat.config, description: FLAT_DESCRIPTION })],
    },
  ];
}

export interface ServeOptions {
  /** Default: the sandbox's counting proxy. */
  facilitatorUrl?: string;
  facilitatorTimeoutMs?: number;
  limits?: { max_rows?: number; query_timeout_ms?: number; send_timeout_ms?: number; mcp_max_rows?: number; mcp_max_bytes?: number; max_refused_payments_per_minute?: number; max_replays?: number };
  tables?: unknown[];
  /** Instead of the fixture file as `database:`, these sources (`databases:`); the fixture file may be one of them as `./paid.sqlite`. */
  databases?: Record<string, unknown>;
  /** More keys of `server:` (metrics, log, shutdown_ms…); the bind stays 127.0.0.1:0. */
  server?: Record<string, unknown>;
  /** A `dashboards:` section (root relative to the sandbox folder). */
  dashboards?: Record<string, unknown>;
}

/** A config file written for a server of the sandbox, with its own ledger. */
export interface SandboxConfig {
  configPath: string;
  config: Config;
}

export interface PaidServer {
  url: string;
  config: Config;
  /** The YAML file the server's config was resolved from (for CLI subprocesses). */
  configPath: string;
  ledgerPath: string;
  /** The server's request, payment and lifecycle events (src/ops/events.ts). */
  events: EventBus;
  /** The ledger's rows as stored on disk, oldest first. */
  /** Settled payments. */
  ledgerRows(): LedgerRow[];
  /** Settlement attempts whose outcome is unknown (the facilitator failed while settling). */
  unconfirmedRows(): LedgerRow[];
  stop(): Promise<void>;
}

/** One row of the ledger's `payments` table, read with bun:sqlite rather than our Ledger API. */
export interface LedgerRow {
  table_name: string;
  resource_url: string;
  query: string | null;
  rows: number | null;
  amount: string;
  asset: string;
  network: string;
  payer: string;
  pay_to: string;
  tx_hash: string;
}

export interface PaidSandbox {
  devnet: Devnet;
  /** Forwards to the devnet facilitator and counts calls; behaviour reset by `resetProxy()`. */
  proxy: FacilitatorProxy;
  dir: string;
  databasePath: string;
  serve(options?: ServeOptions): Promise<PaidServer>;
  /** Writes the YAML config `serve` would start from (for `arrow402 serve` subprocesses). */
  writeConfig(options?: ServeOptions): Promise<SandboxConfig>;
  /** Same SQL on the fixture database, integers as bigint like Arrow's Int64. */
  sqliteRows(sql: string): Record<string, unknown>[];
  /** The test token's Transfer events in a mined transaction (reverted or unknown: throws). */
  transfersIn(transaction: Hex): Promise<{ from: Hex; to: Hex; value: bigint }[]>;
  resetProxy(): void;
  stop(): Promise<void>;
}

export async function startPaidSandbox(): Promise<PaidSandbox> {
  const dir = tempDir("arrow402-paid-");
  const databasePath = join(dir, "paid.sqlite");
  createTypesDatabase(databasePath);
  const db = new Database(databasePath, { readwrite: true });
  db.run("CREATE VIEW flat_items AS SELECT * FROM items");
  db.close();
  const reader = new Database(databasePath, { readonly: true, safeIntegers: true });

  const devnet = await startDevnet();
  const proxy = await startFacilitatorProxy(devnet.facilitatorUrl);
  const chain = createPublicClient({ transport: http(devnet.rpcUrl) });
  const servers = new Set<PaidServer>();
  let serial = 0;

  async function writeConfig(options: ServeOptions = {}): Promise<SandboxConfig> {
    serial += 1;
    const { key: _key, ...token } = devnet.tokenConfig();
    const raw = {
      server: { ...options.server, bind: "127.0.0.1:0" },
      facilitator: { url: options.facilitatorUrl ?? proxy.url, timeout_ms: options.facilitatorTimeoutMs ?? 10_000 },
      ...(options.databases === undefined ? { database: { sqlite: "./paid.sqlite" } } : { databases: options.databases }),
      // A folder that does not exist yet, as in the config `bun run devnet` prints.
      ledger: { path: `./state-${serial}/ledger.sqlite` },
      payment: { max_timeout_seconds: 300, default_description: QUERY_DESCRIPTION },
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      // As `bun run devnet` writes it: settlements whose answer was lost are checked on the sandbox chain.
      rpc_urls: { [String(devnet.chainId)]: devnet.rpcUrl },
      tokens: { [TOKEN_KEY]: { ...token, symbol: TOKEN_SYMBOL, network_label: "devnet" } },
      tables: options.tables ?? defaultTables(devnet.payTo),
      ...(options.dashboards === undefined ? {} : { dashboards: options.dashboards }),
    };
    const configPath = join(dir, `arrow402-${serial}.yaml`);
    writeFileSync(configPath, Bun.YAML.stringify(raw, null, 2));
    const config = resolveConfig(Bun.YAML.parse(await Bun.file(configPath).text()), { baseDir: dir, env: {} });
    return { configPath, config };
  }

  async function serve(options: ServeOptions = {}): Promise<PaidServer> {
    const { configPath, config } = await writeConfig(options);
    const running = await startServer(config);
    const server: PaidServer = {
      url: running.url,
      config,
      configPath,
      ledgerPath: config.ledger.path!,
      events: running.events,
      ledgerRows: () => readLedger(config.ledger.path!, "settled"),
      unconfirmedRows: () => readLedger(config.ledger.path!, "settling"),
      async stop() {
        servers.delete(server);
        await running.stop();
      },
    };
    servers.add(server);
    return server;
  }

  return {
    devnet,
    proxy,
    dir,
    databasePath,
    serve,
    writeConfig,
    sqliteRows: (sql) => reader.query<Record<string, unknown>, []>(sql).all(),
    async transfersIn(transaction) {
      const receipt = await chain.getTransactionReceipt({ hash: transaction });
      if (receipt.status !== "success") throw new Error(`transaction ${transaction} reverted`);
      const token = devnet.token.address.toLowerCase();
      return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs })
        .filter((log) => log.address.toLowerCase() === token)
        .map(({ args }) => ({ from: args.from, to: args.to, value: args.value }));
    },
    resetProxy() {
      proxy.setBehaviour({});
      proxy.resetCounts();
    },
    async stop() {
      for (const server of [...servers]) await server.stop();
      reader.close();
      await proxy.stop();
      await devnet.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readLedger(path: string, status: "settled" | "settling"): LedgerRow[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<LedgerRow, [string]>("SELECT * FROM payments WHERE status = ? ORDER BY id").all(status);
  } finally {
    db.close();
  }
}

/**
 * The usual lifecycle of a paid e2e file: one sandbox and one server for the file, the proxy's
 * behaviour and counters reset before each test. `ready` receives them once started.
 */
export function usePaidSandbox(ready: (sandbox: PaidSandbox, server: PaidServer) => void): void {
  let sandbox: PaidSandbox | undefined;
  beforeAll(async () => {
    sandbox = await startPaidSandbox();
    ready(sandbox, await sandbox.serve());
  }, SANDBOX_START_TIMEOUT_MS);
  afterAll(async () => {
    await sandbox?.stop();
  });
  beforeEach(() => sandbox?.resetProxy());
}
