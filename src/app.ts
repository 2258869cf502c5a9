/**
 * createApp(deps) → the Elysia app, without listen(): tests call `app.handle(new Request(...))`
 * and main.ts starts the server. Services take plain values, never Elysia's context.
 */
import { Elysia } from "elysia";
import type { Config } from "./config/types.ts";
import type { Catalog } from "./db/catalog.ts";
import type { QueryExecutor } from "./db/execute.ts";
import { errorResponse } from "./errors.ts";
import type { PaymentGate } from "./payment/gate.ts";
import { PAYMENT_SIGNATURE } from "./payment/wire.ts";
import { corsHeaders, preflightResponse } from "./routes/cors.ts";
import { dashboardRoutes } from "./routes/dashboards.ts";
import { discoveryDocument } from "./routes/discovery.ts";
import { handleQuery } from "./routes/query.ts";
import { cachedValidator } from "./sql/cache.ts";
import { handleTable } from "./routes/table.ts";

export interface AppDeps {
  config: Config;
  catalog: Catalog;
  executor: QueryExecutor;
  gate: PaymentGate;
  version: string;
}

export function createApp(deps: AppDeps) {
  const { config, catalog } = deps;
  const discovery = () => discoveryDocument(config, catalog, deps.version);
  const queries = { ...deps, validate: cachedValidator(catalog, config.limits) };
  return new Elysia()
    .onRequest(({ request, set }) => {
      const origin = request.headers.get("origin");
      if (request.method === "OPTIONS") return preflightResponse(config.server.corsOrigins, origin);
      Object.assign(set.headers, corsHeaders(config.server.corsOrigins, origin));
    })
    .onError(({ code, error }) => {
      if (code === "NOT_FOUND") return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
      return errorResponse(error);
    })
    .get("/api", discovery)
    .get("/api/", discovery)
    // Elysia gives a null parameter for a path segment that is not valid percent-encoding.
    .get("/api/table/:name", ({ params, request }) => handleTable(deps, params.name as string | null, request))
    .get("/api/query", ({ request }) =>
      handleQuery(queries, new URL(request.url), request.headers.get(PAYMENT_SIGNATURE), request.signal),
    )
    .use(dashboardRoutes(config.dashboards));
}

export type App = ReturnType<typeof createApp>;
