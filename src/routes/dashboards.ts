/**
 * Static dashboards (spec "GET /", ARCHITECTURE.md §7): `/` is the generated landing page, and each
 * enabled dashboard gets its own routes `/<slug>`, `/<slug>/` and `/<slug>/*` serving its folder.
 * Nothing is mounted when no dashboards are configured, so `/` is Elysia's bare 404 then.
 * Both `/` and the dashboard routes answer 503 until `arrow402 dashboards` has written the
 * landing page. Only configured slugs are routed (`api` is reserved by the config), so the
 * plugin never shadows `/api/*`.
 */
import { stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { Elysia } from "elysia";
import type { Config } from "../config/types.ts";
import { resolveDashboardFile } from "../dashboards/static-files.ts";
import { DashboardsNotGeneratedError, errorResponse } from "../errors.ts";

/** Types Bun does not know; everything else comes from Bun.file's extension table. */
const CONTENT_TYPES: Record<string, string> = {
  ".arrow": "application/vnd.apache.arrow.file",
  ".arrows": "application/vnd.apache.arrow.stream",
};

const NOT_FOUND_HEADERS = { "content-type": "text/plain; charset=utf-8" };

function notFound(): Response {
  return new Response("Not found", { status: 404, headers: NOT_FOUND_HEADERS });
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function fileResponse(path: string): Response {
  const file = Bun.file(path);
  const type = CONTENT_TYPES[extname(path).toLowerCase()] ?? file.type;
  return new Response(file, {
    headers: {
      "content-type": type,
      // Regenerated dashboards must show at once; the files are small.
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
    },
  });
}

/** The still-encoded path after `/<slug>/`, taken from the raw URL rather than router params. */
function restOfPath(url: string, slug: string): string {
  const pathname = new URL(url).pathname;
  const prefix = `/${slug}/`;
  return pathname.startsWith(prefix) ? pathname.slice(prefix.length) : "";
}

export function dashboardRoutes(dashboards: Config["dashboards"]): Elysia {
  const app = new Elysia({ name: "arrow402-dashboards" });
  if (!dashboards) return app;
  const { root } = dashboards;
  const landing = join(root, "index.html");
  const notGenerated = () => errorResponse(new DashboardsNotGeneratedError());

  app.get("/", async () => ((await isFile(landing)) ? fileResponse(landing) : notGenerated()));

  for (const entry of dashboards.entries.filter((e) => e.enabled)) {
    const folder = join(root, entry.slug);
    const serve = async ({ request }: { request: Request }) => {
      if (!(await isFile(landing))) return notGenerated();
      const file = await resolveDashboardFile(folder, restOfPath(request.url, entry.slug));
      return file ? fileResponse(file) : notFound();
    };
    app.get(`/${entry.slug}`, serve).get(`/${entry.slug}/`, serve).get(`/${entry.slug}/*`, serve);
  }
  return app;
}
