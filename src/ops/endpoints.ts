/**
 * The operations endpoints (ARCHITECTURE.md §11): `GET /healthz`, `GET /readyz`, and `GET /metrics` when
 * `server.metrics` is true — then with `Authorization: Bearer <server.metrics_token>` when a token
 * is set, compared in constant time. All free; never cached by intermediaries.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { Config } from "../config/types.ts";
import { ForbiddenError, UnauthorizedError } from "../errors.ts";
import { readinessBody, type Readiness } from "./health.ts";
import { EXPOSITION_CONTENT_TYPE } from "./prometheus.ts";

export interface OperationsEndpoints {
  readiness: Readiness;
  metrics: { render(): string };
}

const NO_STORE = { "cache-control": "no-store" };

export function operationsRoutes(server: Config["server"], ops: OperationsEndpoints | undefined): Elysia {
  const app = new Elysia({ name: "arrow402-operations" });
  app.get("/healthz", () => Response.json({ status: "ok" }, { headers: NO_STORE }));
  if (ops === undefined) return app;
  app.get("/readyz", async () => {
    const report = await ops.readiness.check();
    return Response.json(readinessBody(report), { status: report.ready ? 200 : 503, headers: NO_STORE });
  });
  if (!server.metrics) return app;
  const token = server.metricsToken;
  app.get("/metrics", ({ request }) => {
    if (token !== null) checkBearer(request.headers.get("authorization"), token);
    return new Response(ops.metrics.render(), { headers: { "content-type": EXPOSITION_CONTENT_TYPE, ...NO_STORE } });
  });
  return app;
}

function checkBearer(header: string | null, token: string): void {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  if (match === null) throw new UnauthorizedError("GET /metrics needs the header Authorization: Bearer <server.metrics_token>");
  if (!sameSecret(match[1]!, token)) throw new ForbiddenError("The bearer token is not this server's metrics token (server.metrics_token)");
}

/** Equal in constant time: digests of equal length, compared with timingSafeEqual. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}
