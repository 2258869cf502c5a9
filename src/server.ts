/**
 * Wires the parts from a resolved config: `buildApp` for `app.handle()` tests, `startServer`
 * for `arrow402 serve` and the e2e tests, so the tests exercise exactly what users run.
 */
import { createApp, type App } from "./app.ts";
import type { Config } from "./config/types.ts";
import { openReadOnly, readCatalog, type Catalog } from "./db/catalog.ts";
import { QueryExecutor } from "./db/execute.ts";
import { ConfigError } from "./errors.ts";
import { createFacilitatorClient } from "./payment/facilitator.ts";
import { createPaymentGate } from "./payment/gate.ts";
import { openLedger } from "./payment/ledger.ts";
import { createQueryValidator } from "./sql/validator.ts";
import { VERSION } from "./version.ts";

export interface BuiltApp {
  app: App;
  catalog: Catalog;
  close(): void;
}

export interface RunningServer {
  url: string;
  catalog: Catalog;
  stop(): Promise<void>;
}

export function buildApp(config: Config, options: { workers?: number } = {}): BuiltApp {
  const db = openReadOnly(config.database.sqlite);
  const { catalog, problems } = readCatalog(db, config.tables);
  db.close();
  if (problems.length > 0) throw new ConfigError(problems);
  const executor = new QueryExecutor(config.database.sqlite, config.limits, options.workers);
  const ledger = openLedger(config.ledger.path);
  const gate = createPaymentGate({
    facilitator: createFacilitatorClient(config.facilitator),
    ledger,
    maxTimeoutSeconds: config.payment.maxTimeoutSeconds,
  });
  const validator = createQueryValidator(catalog, config.limits);
  const app = createApp({ config, catalog, executor, gate, version: VERSION, validator });
  return {
    app,
    catalog,
    close() {
      validator.close();
      executor.close();
      ledger.close();
    },
  };
}

export function startServer(config: Config, options: { workers?: number } = {}): RunningServer {
  let built: BuiltApp | null = null;
  const server = Bun.serve({
    hostname: config.server.host,
    port: config.server.port,
    // Elysia's compiled handler itself (`app.handle` wraps it in one more promise).
    fetch: (request) => built!.app.fetch(request),
    // Large results stream for a while; the query time limit bounds the work, not this.
    idleTimeout: 0,
  });
  // Port 0 means "any free port": a base_url still naming port 0 follows the real one.
  const baseUrl = config.server.baseUrl.replace(/:0$/, `:${server.port}`);
  try {
    built = buildApp({ ...config, server: { ...config.server, baseUrl } }, options);
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
      app.close();
    },
  };
}
