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
import { addCorsHeaders, preflightResponse } from "./routes/cors.ts";
import { dashboardRoutes } from "./routes/dashboards.ts";
import { discoveryDocument } from "./routes/discovery.ts";
import { handleQuery } from "./routes/query.ts";
import type { QueryValidator } from "./sql/validator.ts";
import { handleTable } from "./routes/table.ts";

export interface AppDeps {
  config: Config;
  catalog: Catalog;
  executor: QueryExecutor;
  gate: PaymentGate;
  version: string;
  /** Validates query text off the HTTP thread (sql/validator.ts); its owner closes it. */
  validator: QueryValidator;
}

export function createApp(deps: AppDeps) {
  const { config, catalog } = deps;
  const discovery = () => Response.json(discoveryDocument(config, catalog, deps.version));
  const queries = { ...deps, validate: deps.validator.validate };
  const withCors = (request: Request, response: Response) => addCorsHeaders(response.headers, config.server.corsOrigins, request.headers.get("origin"));
  return new Elysia()
    .onRequest(({ request }) => {
      if (request.method === "OPTIONS") return preflightResponse(config.server.corsOrigins, request.headers.get("origin"));
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
