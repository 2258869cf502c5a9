/**
 * Wires the parts from a resolved config: `buildApp` for `app.handle()` tests, `startServer`
 * for `arrow402 serve` and the e2e tests, so the tests exercise exactly what users run.
 *
 * Two lifetimes (ARCHITECTURE.md §11 "Operations"). The services — query workers, payment store, event
 * bus, metrics — live as long as the process. The app — catalog, payment core, readiness, routes —
 * is built from a config, and rebuilt from each config a reload applies, then swapped in one step
 * (ops/app-holder.ts): a request sees the old config or the new one, never a mix.
 */
import { createApp, type App } from "./app.ts";
import type { Config } from "./config/types.ts";
import type { Catalog } from "./catalog.ts";
import type { TableEngine } from "./engines/engine.ts";
import { SqliteEngine } from "./engines/sqlite/engine.ts";
import { describeCatalog, openEngines } from "./engines/sources.ts";
import { QueryExecutor } from "./results/executor.ts";
import { ConfigError } from "./errors.ts";
import { idleSecondsAfter } from "./ops/keep-alive.ts";
import { AppHolder } from "./ops/app-holder.ts";
import { drain, type DrainResult } from "./ops/drain.ts";
import { EventBus } from "./ops/events.ts";
import { createReadiness } from "./ops/health.ts";
import { createMetrics, type Metrics } from "./ops/metrics.ts";
import { planReload } from "./ops/reload.ts";
import { createChainReader } from "./payment/chain.ts";
import { createPaymentCore } from "./payment/core.ts";
import { createFacilitatorClient } from "./payment/facilitator.ts";
import type { PaymentStore } from "./payment/store.ts";
import { openPaymentStore } from "./payment/store/open.ts";
import { ClientCounts } from "./routes/client-limit.ts";
import { createQueryValidator, type QueryValidator } from "./sql/validator.ts";
import { VERSION } from "./version.ts";

export interface BuiltApp {
  app: App;
  catalog: Catalog;
  events: EventBus;
  close(): Promise<void>;
}

export type ReloadOutcome = { applied: true; changed: string[]; needsRestart: string[] } | { applied: false; problems: string[] };

export interface RunningServer {
  url: string;
  /** What is being served now (a reload changes them). */
  readonly catalog: Catalog;
  readonly config: Config;
  /** Every request, payment and lifecycle event (ops/events.ts); logging subscribes here. */
  events: EventBus;
  /** Loads a new config and applies it in one step, or keeps the running one and reports why (SIGHUP). */
  reload(load: () => Config, source: string): Promise<ReloadOutcome>;
  /** Stops accepting, drains within `server.shutdown_ms`, then closes the workers and the store (SIGTERM). */
  shutdown(signal?: string): Promise<DrainResult>;
  /** Stops at once, closing connections in flight. */
  stop(): Promise<void>;
}

export interface BuildOptions {
  workers?: number;
  /** The socket peer's address of a request (Bun.serve's requestIP). */
  peerAddress?: (request: Request) => string | null;
  /** Starts a connection's keep-alive time once its response is handed over (ops/keep-alive.ts). */
  handedOver?: (request: Request, bytesToSend: number) => void;
  /** Closes a connection whose streamed response was cut by the send timeout. */
  cutOff?: (request: Request) => void;
}

/** What lives as long as the process, across reloads. */
interface Services {
  /** The engine of each source (engines/sources.ts): sources need a restart, tables do not. */
  engines: ReadonlyMap<string, TableEngine>;
  executor: QueryExecutor;
  store: PaymentStore;
  events: EventBus;
  metrics: Metrics;
  /** What clients hold against the per-client limits: a reload changes the limits, not these. */
  clientCounts: ClientCounts;
  /** The catalog served now (the metrics name each table's source from it). */
  catalog: Catalog | null;
  draining: boolean;
  close(): Promise<void>;
}

interface Served {
  app: App;
  catalog: Catalog;
  config: Config;
  /** Validates query text against this catalog, off the HTTP thread (sql/validator.ts). */
  validator: QueryValidator;
}

/**
 * How long a replaced app's validator stays open for requests still in it: longer than any one
 * validation may take (sql/validator.ts deadline and queue wait).
 */
const RETIRED_VALIDATOR_MS = 10_000;

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<BuiltApp> {
  const services = await openServices(config, options);
  let catalog: Catalog;
  try {
    catalog = await describeCatalog(config, services.engines);
  } catch (error) {
    await services.close();
    throw error;
  }
  services.catalog = catalog;
  const { app, validator } = assemble(config, catalog, services, options);
  await validator.ready;
  const close = async () => {
    validator.close();
    await services.close();
  };
  return { app, catalog, events: services.events, close };
}

export async function startServer(config: Config, options: { workers?: number } = {}): Promise<RunningServer> {
  const holder = new AppHolder();
  const server = Bun.serve({
    hostname: config.server.host,
    port: config.server.port,
    // Bun's idle timeout runs while a request is handled and sent: off until it has been (keep-alive.ts).
    fetch: (request, server) => {
      server.timeout(request, 0);
      return holder.fetch(request);
    },
    idleTimeout: config.limits.keepAliveSeconds,
  });
  const build: BuildOptions = {
    ...options,
    peerAddress: (request) => server.requestIP(request)?.address ?? null,
    handedOver: (request, bytesToSend) => server.timeout(request, idleSecondsAfter(config.limits.keepAliveSeconds, bytesToSend)),
    // Bun keeps a connection whose response is stuck in its send buffer open after the body
    // failed; idle for a second, it is closed.
    cutOff: (request) => server.timeout(request, 1),
  };
  // Port 0 means "any free port": a base_url still naming port 0 follows the real one.
  const listening = (c: Config): Config => ({ ...c, server: { ...c.server, baseUrl: c.server.baseUrl.replace(/:0$/, `:${server.port}`) } });
  let services: Services | undefined;
  let served: Served;
  try {
    services = await openServices(config, build, () => server.pendingRequests);
    const catalog = await describeCatalog(config, services.engines);
    services.catalog = catalog;
    served = assemble(listening(config), catalog, services, build);
    // Until its validation workers can take texts the server answers 503 "Starting" (app-holder.ts):
    // on a loaded machine their start-up takes seconds, which a first query would otherwise wait
    // out and then be refused.
    await served.validator.ready;
  } catch (error) {
    void server.stop(true);
    await services?.close();
    throw error;
  }
  const open = services;
  holder.swap(served.app);
  /** The config as given (before the port is filled in), which a reload is compared with. */
  let running = config;
  let shutdown: Promise<DrainResult> | null = null;
  let reloading: Promise<void> = Promise.resolve();
  async function reloadNow(load: () => Config, source: string): Promise<ReloadOutcome> {
    let plan;
    let next: Served;
    try {
      if (open.draining) throw new ConfigError(["(top level): the server is shutting down"]);
      plan = planReload(running, load());
      next = assemble(listening(plan.config), await describeCatalog(plan.config, open.engines), open, build, served.validator);
    } catch (error) {
      // (nothing was swapped in: the running app and its validator stay)
      const problems = error instanceof ConfigError ? error.problems : [(error as Error).message];
      open.events.emit({ type: "config.rejected", source, problems });
      return { applied: false, problems };
    }
    holder.swap(next.app);
    open.catalog = next.catalog;
    // Requests already in the old app may still be validating: its validator retires a little later.
    const retired = served.validator;
    setTimeout(() => retired.close(), RETIRED_VALIDATOR_MS).unref?.();
    served = next;
    running = plan.config;
    open.events.emit({ type: "config.reloaded", source, changed: plan.changed, needsRestart: plan.needsRestart });
    return { applied: true, changed: plan.changed, needsRestart: plan.needsRestart };
  }

  return {
    url: `http://${server.hostname!.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`,
    get catalog() {
      return served.catalog;
    },
    get config() {
      return served.config;
    },
    events: open.events,
    reload(load, source) {
      // One at a time, in the order asked: each is planned against the config the last one left.
      const outcome = reloading.then(() => reloadNow(load, source));
      reloading = outcome.then(() => {});
      return outcome;
    },
    shutdown(signal = "SIGTERM") {
      shutdown ??= (async () => {
        open.draining = true;
        const deadlineMs = served.config.server.shutdownMs;
        open.events.emit({ type: "shutdown.started", signal, inFlight: server.pendingRequests, deadlineMs });
        const result = await drain(server, holder, deadlineMs);
        served.validator.close();
        await open.close();
        open.events.emit({ type: "shutdown.finished", cut: result.cut });
        return result;
      })();
      return shutdown;
    },
    async stop() {
      open.draining = true;
      await server.stop(true);
      served.validator.close();
      await open.close();
    },
  };
}

async function openServices(config: Config, options: BuildOptions, inFlight?: () => number): Promise<Services> {
  const store = await openPaymentStore(config.ledger);
  let engines: Map<string, TableEngine>;
  try {
    engines = openEngines(config, { workers: options.workers });
  } catch (error) {
    await store.close();
    throw error;
  }
  const executor = new QueryExecutor(engines, config.limits);
  const sqlite = [...engines.values()].filter((engine): engine is SqliteEngine => engine instanceof SqliteEngine);
  const sum = (figure: (engine: SqliteEngine) => number) => () => sqlite.reduce((total, engine) => total + figure(engine), 0);
  const events = new EventBus();
  const metrics = createMetrics({
    version: VERSION,
    inFlight,
    sourceOf: (name) => {
      const table = services.catalog?.table(name);
      return table === undefined ? undefined : { source: table.config.database, engine: table.engine ?? "sqlite" };
    },
    workersRestarted: sum((engine) => engine.workersRestarted),
    spillBytes: () => executor.spillBytes,
    spilledBytes: () => executor.spilledBytes,
    unsentBytes: () => executor.sending.unsent.usedBytes,
    resultCacheHits: () => executor.stats.resultCacheHits,
    resultCacheBytes: () => executor.resultCacheBytes,
  });
  events.subscribe(metrics.observe);
  let closed: Promise<void> | null = null;
  const services: Services = {
    catalog: null,
    engines,
    executor,
    store,
    events,
    metrics,
    clientCounts: new ClientCounts(),
    draining: false,
    close() {
      closed ??= (async () => {
        executor.close();
        await store.close();
      })();
      return closed;
    },
  };
  return services;
}

/** The app for one config, over the long-lived services. */
function assemble(config: Config, catalog: Catalog, services: Services, options: BuildOptions, previous?: QueryValidator): Served {
  const { events, store } = services;
  const facilitator = createFacilitatorClient(config.facilitator);
  const payments = createPaymentCore({
    facilitator,
    store,
    chain: createChainReader(config.rpcUrls, config.facilitator.timeoutMs),
    maxTimeoutSeconds: config.payment.maxTimeoutSeconds,
    maxReplays: config.limits.maxReplays,
    onEvent: events.emit,
  });
  const readiness = createReadiness({
    sources: services.engines,
    store,
    facilitator,
    networks: [...new Set(config.tables.flatMap((table) => table.priceTags.map((tag) => tag.token.network)))],
    draining: () => services.draining,
    onChange: (ready, failing) => events.emit({ type: "readiness.changed", ready, failing }),
  });
  const ops = { readiness, metrics: services.metrics, onRequest: events.emit };
  // A reload that keeps the tables' shape keeps the validation workers (and skips their start-up).
  const validator = previous?.forCatalog(catalog, config.limits) ?? createQueryValidator(catalog, config.limits);
  const app = createApp({ config, catalog, executor: services.executor, payments, version: VERSION, validator, peerAddress: options.peerAddress, handedOver: options.handedOver, cutOff: options.cutOff, ops, clientCounts: services.clientCounts });
  return { app, catalog, config, validator };
}
