/**
 * createApp(deps) → the app, without listen(): tests call `app.handle(new Request(...))` and
 * server.ts serves `app.fetch`. Services take plain values, never Elysia's context.
 *
 * Every request is observed once (ops/request-events.ts): when it has finished, a
 * `request.finished` event goes to `deps.ops.onRequest`, with what the handlers noted about it
 * (its table, its rows) and the bytes of its body. Routes themselves never log or count.
 */
import { Elysia } from "elysia";
import type { Config } from "./config/types.ts";
import type { Catalog } from "./engines/sqlite/catalog.ts";
import type { QueryExecutor } from "./results/executor.ts";
import { errorResponse, MethodNotAllowedError } from "./errors.ts";
import { operationsRoutes, type OperationsEndpoints } from "./ops/endpoints.ts";
import type { RequestEvent } from "./ops/events.ts";
import { observeRequests } from "./ops/request-events.ts";
import { routeLabel } from "./ops/routes.ts";
import type { PaymentCore } from "./payment/core.ts";
import { ClientConcurrency, ClientCounts, clientAddressOf } from "./routes/client-limit.ts";
import { clientKey } from "./routes/client-key.ts";
import { RefusedPayments } from "./routes/refused-payments.ts";
import { addCorsHeaders, preflightResponse } from "./routes/cors.ts";
import { createMcpHandler, type Admission } from "./mcp/server.ts";
import { dashboardRoutes } from "./routes/dashboards.ts";
import { discoveryDocument } from "./routes/discovery.ts";
import { handleQuery } from "./routes/query.ts";
import { checkoutScriptResponse } from "./routes/paywall.ts";
import { CHECKOUT_SCRIPT_PATH } from "./checkout/bundle.ts";
import { handleTable } from "./routes/table.ts";
import { invalidHostResponse, ROUTER_OPTIONS } from "./routes/host.ts";
import { createQueryService } from "./service/query-service.ts";
import { createTableService } from "./service/table-service.ts";
import type { QueryValidator } from "./sql/validator.ts";

export interface AppDeps {
  config: Config;
  catalog: Catalog;
  executor: QueryExecutor;
  payments: PaymentCore;
  version: string;
  /** Validates query text off the HTTP thread (sql/validator.ts); its owner closes it. */
  validator: QueryValidator;
  /** The client's address as the server sees it (the socket's peer); absent in app.handle() tests. */
  peerAddress?: (request: Request) => string | null;
  /** Starts a connection's keep-alive time once its response is handed over (ops/keep-alive.ts). */
  handedOver?: (request: Request, bytesToSend: number) => void;
  /** Closes a connection whose streamed response was cut by the send timeout. */
  cutOff?: (request: Request) => void;
  /** Operations (ARCHITECTURE.md §11): readiness, metrics, and where finished-request events go. */
  ops?: AppOperations;
  /** What clients hold against the per-client limits; the server passes the same one to every app it reloads. */
  clientCounts?: ClientCounts;
}

export interface AppOperations extends OperationsEndpoints {
  onRequest(event: RequestEvent): void;
}

export interface App {
  /** Answers one request (the same function as `fetch`). */
  handle(request: Request): Promise<Response>;
  fetch(request: Request): Promise<Response>;
}

/** The API's read-only paths answer POST, PUT, PATCH and DELETE with 405 and `Allow: GET, HEAD` (OPTIONS is CORS's). */
const readOnlyPaths = new Elysia(ROUTER_OPTIONS);
for (const path of ["/api", "/api/", "/api/query", "/api/table/:name"]) {
  for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
    readOnlyPaths.route(method, path, ({ request }) => {
      throw new MethodNotAllowedError(method, new URL(request.url).pathname, "GET, HEAD");
    });
  }
}

export function createApp(deps: AppDeps): App {
  const { config, catalog } = deps;
  const discovery = () => Response.json(discoveryDocument(config, catalog, deps.version));
  const queries = createQueryService({ ...deps, validate: deps.validator.validate });
  const tables = createTableService(deps);
  const mcp = createMcpHandler({ config, catalog, queries, tables, version: deps.version });
  const counts = deps.clientCounts ?? new ClientCounts();
  const perClient = new ClientConcurrency(config.limits.maxConcurrentPerClient, counts.running);
  const refusedPayments = new RefusedPayments(config.limits.maxRefusedPaymentsPerMinute, Date.now, counts.refusedPayments);
  const clientOf = (request: Request) => clientAddressOf(request, deps.peerAddress?.(request) ?? null, config.server.trustProxy);
  /**
   * What the per-client limits count the request's client by (routes/client-key.ts): its address as
   * the request observer read it on arrival (else read now), or that address's IPv6 network. None
   * while both limits are off (`max_refused_payments_per_minute` is on by default).
   */
  const limited = config.limits.maxConcurrentPerClient > 0 || config.limits.maxRefusedPaymentsPerMinute > 0;
  const limitKeyOf = (request: Request) => {
    if (!limited) return null;
    const noted = observer.factsOf(request).client;
    const address = noted === undefined ? clientOf(request) : noted;
    return address === null ? null : clientKey(address, config.limits.clientIpv6Prefix);
  };
  const withCors = (request: Request, response: Response) => addCorsHeaders(response.headers, config.server.corsOrigins, request.headers.get("origin"));
  const slugs = new Set((config.dashboards?.entries ?? []).filter((entry) => entry.enabled).map((entry) => entry.slug));
  const observer = observeRequests((request) => routes.fetch(request), {
    emit: (event) => deps.ops?.onRequest(event),
    route: (pathname) => routeLabel(pathname, slugs),
    client: clientOf,
    handedOver: deps.handedOver,
    cutOff: deps.cutOff,
  });
  const routes = new Elysia(ROUTER_OPTIONS)
    .onRequest(({ request }) => {
      if (request.method === "OPTIONS") return preflightResponse(config.server.corsOrigins, request.headers.get("origin"));
      return invalidHostResponse(request) ?? undefined;
    })
    // CORS headers go onto the finished response: headers left in Elysia's `set` would make it
    // copy every response into a new one.
    .onAfterHandle({ as: "global" }, ({ request, responseValue }) => {
      if (responseValue instanceof Response) withCors(request, responseValue);
    })
    .onError(({ code, error, request }) => {
      const response =
        code === "NOT_FOUND" ? new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } }) : errorResponse(error);
      withCors(request, response);
      return response;
    })
    // The paywall page's script (routes/paywall.ts, ARCHITECTURE.md §15).
    .get(CHECKOUT_SCRIPT_PATH, () => checkoutScriptResponse())
    .get("/api", discovery)
    .get("/api/", discovery)
    // Elysia gives a null parameter for a path segment that is not valid percent-encoding.
    .get("/api/table/:name", ({ params, request }) => {
      const name = params.name as string | null;
      const facts = observer.factsOf(request);
      facts.table = name === null ? null : (catalog.table(name)?.name ?? null);
      return handleTable({ config, tables }, name, request, refusedPayments.budgetOf(limitKeyOf(request)));
    })
    .get("/api/query", ({ request }) => {
      const facts = observer.factsOf(request);
      const client = limitKeyOf(request);
      const budget = refusedPayments.budgetOf(client);
      return perClient.guard(client, (track) => handleQuery({ config, queries: facts.noting(queries), sending: deps.executor.sending }, request, facts.tracking(track), budget));
    })
    // MCP (ARCHITECTURE.md §12): a POST is one JSON-RPC exchange, a query among them.
    .post("/mcp", ({ request }) => {
      const client = limitKeyOf(request);
      // One query's slot before the body is read; a batch's further tool calls take theirs once counted.
      const admit: Admission = (toolCalls, run) => (toolCalls > 1 ? perClient.guard(client, run, toolCalls - 1, 1) : run());
      return perClient.guard(client, () => mcp(request, admit, refusedPayments.budgetOf(client)));
    })
    .get("/mcp", ({ request }) => mcp(request))
    .delete("/mcp", ({ request }) => mcp(request))
    .use(readOnlyPaths)
    .use(operationsRoutes(config.server, deps.ops))
    .use(dashboardRoutes(config.dashboards));
  return { handle: observer.handle, fetch: observer.handle };
}
