/**
 * Wires the parts from a resolved config: `buildApp` for `app.handle()` tests, `startServer`
 * for `arrow402 serve` and the e2e tests, so the tests exercise exactly what users run.
 */
import { createApp, type App } from "./app.ts";
import type { Config } from "./config/types.ts";
import { openReadOnly, readCatalog, type Catalog } from "./db/catalog.ts";
import { QueryExecutor } from "./db/execute.ts";
import { ConfigError } from "./errors.ts";
import { createChainReader } from "./payment/chain.ts";
import { createPaymentCore } from "./payment/core.ts";
import { createFacilitatorClient } from "./payment/facilitator.ts";
import { openPaymentStore } from "./payment/store/open.ts";
import { createQueryValidator } from "./sql/validator.ts";
import { VERSION } from "./version.ts";

export interface BuiltApp {
  app: App;
  catalog: Catalog;
  close(): Promise<void>;
}

export interface RunningServer {
  url: string;
  catalog: Catalog;
  stop(): Promise<void>;
}

export interface BuildOptions {
  workers?: number;
  /** The socket peer's address of a request (Bun.serve's requestIP). */
  peerAddress?: (request: Request) => string | null;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<BuiltApp> {
  const db = openReadOnly(config.database.sqlite);
  const { catalog, problems } = readCatalog(db, config.tables);
  db.close();
  if (problems.length > 0) throw new ConfigError(problems);
  const store = await openPaymentStore(config.ledger);
  const executor = new QueryExecutor(config.database.sqlite, config.limits, options.workers);
  const payments = createPaymentCore({
    facilitator: createFacilitatorClient(config.facilitator),
    store,
    chain: createChainReader(config.rpcUrls),
    maxTimeoutSeconds: config.payment.maxTimeoutSeconds,
    claimTtlMs: claimTtlMs(config),
  });
  const validator = createQueryValidator(catalog, config.limits);
  const app = createApp({ config, catalog, executor, payments, version: VERSION, validator, peerAddress: options.peerAddress });
  return {
    app,
    catalog,
    async close() {
      validator.close();
      executor.close();
      await store.close();
    },
  };
}

export async function startServer(config: Config, options: { workers?: number } = {}): Promise<RunningServer> {
  let built: BuiltApp | null = null;
  const server = Bun.serve({
    hostname: config.server.host,
    port: config.server.port,
    // Elysia's compiled handler itself (`app.handle` wraps it in one more promise).
    fetch: (request) => (built === null ? new Response("Starting: retry shortly", { status: 503, headers: { "retry-after": "1" } }) : built.app.fetch(request)),
    // Large results stream for a while; the query time limit bounds the work, not this.
    idleTimeout: 0,
  });
  // Port 0 means "any free port": a base_url still naming port 0 follows the real one.
  const baseUrl = config.server.baseUrl.replace(/:0$/, `:${server.port}`);
  try {
    built = await buildApp({ ...config, server: { ...config.server, baseUrl } }, { ...options, peerAddress: (request) => server.requestIP(request)?.address ?? null });
  } catch (error) {
    void server.stop(true);
    throw error;
  }
  const app = built;
  return {
    url: `http://${server.hostname!.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`,
    catalog: app.catalog,
    async stop() {
      await server.stop(true);
      await app.close();
    },
  };
}

/**
 * How long one request may hold a payment: its query, /verify and /settle, twice over for the
 * store and chain reads around them (60 s with the default limits). A holder that died (a killed
 * process or replica) frees the payment after this long, so it follows the limits that bound the
 * work rather than a fixed allowance.
 */
function claimTtlMs(config: Config): number {
  return 2 * (config.limits.queryTimeoutMs + 2 * config.facilitator.timeoutMs);
}
