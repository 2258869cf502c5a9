import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import type { Config } from "../../src/config/types.ts";
import { resolveDashboardFile } from "../../src/dashboards/static-files.ts";
import { dashboardRoutes } from "../../src/routes/dashboards.ts";
import { listen, rawGet, tempDir } from "./support.ts";

const SECRET_ROOT = "TOP-SECRET-IN-ROOT";
const SECRET_OUTSIDE = "TOP-SECRET-OUTSIDE";
const HINT = "Dashboards are configured but not generated yet: run 'arrow402 dashboards' to build them.";

const base = tempDir();
const root = join(base, "dashboards");
const outside = join(base, "outside");
const landingHtml = "<!doctype html><title>landing</title><h1>Landing é</h1>\n";
const dexHtml = "<!doctype html><title>dex</title><h1>DEX</h1>\n";
const snapshotBytes: Uint8Array<ArrayBuffer> = new Uint8Array([0x41, 0x52, 0x52, 0x4f, 0x57, 0x31, 0, 0, 255]);

function entry(slug: string, enabled = true) {
  return { slug, title: slug, description: "", tags: [], table: "swaps", enabled };
}
const dashboards: NonNullable<Config["dashboards"]> = { root, entries: [entry("dex"), entry("off", false)] };

beforeAll(() => {
  mkdirSync(join(root, "dex", "sub"), { recursive: true });
  mkdirSync(join(root, "off"));
  mkdirSync(outside);
  writeFileSync(join(root, "index.html"), landingHtml);
  writeFileSync(join(root, "secret.txt"), SECRET_ROOT);
  writeFileSync(join(root, "dex", "index.html"), dexHtml);
  writeFileSync(join(root, "dex", "style.css"), "body { color: red }");
  writeFileSync(join(root, "dex", "dashboard.js"), "console.log('hi')");
  writeFileSync(join(root, "dex", "snapshot.arrow"), snapshotBytes);
  writeFileSync(join(root, "dex", ".hidden"), SECRET_ROOT);
  writeFileSync(join(root, "dex", "sub", "index.html"), "<p>sub index</p>");
  writeFileSync(join(root, "dex", "sub", "notes.txt"), "notes");
  writeFileSync(join(root, "off", "index.html"), "<p>disabled</p>");
  writeFileSync(join(outside, "outside.txt"), SECRET_OUTSIDE);
  symlinkSync(join(outside, "outside.txt"), join(root, "dex", "link-out"));
  symlinkSync(outside, join(root, "dex", "link-dir-out"));
  symlinkSync(join(root, "secret.txt"), join(root, "dex", "link-sibling.txt"));
  symlinkSync(join(root, "dex", "style.css"), join(root, "dex", "link-in.css"));
});

function handle(plugin: Elysia, path: string): Promise<Response> {
  return new Elysia().use(plugin).handle(new Request(`http://localhost${path}`));
}

describe("no dashboards configured", () => {
  test("nothing is mounted: / and any slug are Elysia's bare 404", async () => {
    for (const path of ["/", "/dex", "/dex/"]) {
      const response = await handle(dashboardRoutes(undefined), path);
      expect(response.status).toBe(404);
      expect(await response.text()).toBe("NOT_FOUND");
    }
  });
});

describe("through app.handle", () => {
  test("GET / returns the landing page verbatim as HTML", async () => {
    const response = await handle(dashboardRoutes(dashboards), "/");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/html");
    expect(await response.text()).toBe(landingHtml);
  });

  test("/<slug> and /<slug>/ return the dashboard's index.html", async () => {
    for (const path of ["/dex", "/dex/"]) {
      const response = await handle(dashboardRoutes(dashboards), path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toStartWith("text/html");
      expect(await response.text()).toBe(dexHtml);
    }
  });

  test("files are served with their content types", async () => {
    const cases: [string, string, string | Uint8Array<ArrayBuffer>][] = [
      ["/dex/style.css", "text/css", "body { color: red }"],
      ["/dex/dashboard.js", "javascript", "console.log('hi')"],
      ["/dex/snapshot.arrow", "application/vnd.apache.arrow.file", snapshotBytes],
      ["/dex/sub/", "text/html", "<p>sub index</p>"],
      ["/dex/sub/notes.txt", "text/plain", "notes"],
      ["/dex/link-in.css", "text/css", "body { color: red }"],
      ["/dex/style.css?v=2", "text/css", "body { color: red }"],
    ];
    for (const [path, type, body] of cases) {
      const response = await handle(dashboardRoutes(dashboards), path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain(type);
      if (typeof body === "string") expect(await response.text()).toBe(body);
      else expect(new Uint8Array(await response.arrayBuffer())).toEqual(body);
    }
  });

  test("missing files, dotfiles, disabled and unknown slugs are a bare 404", async () => {
    for (const path of ["/dex/nope.css", "/dex/sub/nope", "/dex/.hidden", "/off", "/off/", "/off/index.html", "/zzz/", "/secret.txt"]) {
      const response = await handle(dashboardRoutes(dashboards), path);
      expect(response.status).toBe(404);
      const body = await response.text();
      expect(body).not.toContain(SECRET_ROOT);
      expect(body).not.toContain("{");
    }
  });

  test("does not shadow /api routes registered beside it", async () => {
    const app = new Elysia().get("/api/", () => "discovery").get("/api/query", () => "query").use(dashboardRoutes(dashboards));
    for (const [path, body] of [["/api/", "discovery"], ["/api/query?query=x", "query"]] as const) {
      const response = await app.handle(new Request(`http://localhost${path}`));
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(body);
    }
  });
});

describe("landing page not generated", () => {
  test("/ and every dashboard path answer 503 with the hint", async () => {
    const pending = tempDir();
    mkdirSync(join(pending, "dex"));
    writeFileSync(join(pending, "dex", "index.html"), dexHtml);
    const plugin = dashboardRoutes({ root: pending, entries: [entry("dex")] });
    for (const path of ["/", "/dex", "/dex/", "/dex/index.html", "/dex/nope"]) {
      const response = await handle(plugin, path);
      expect(response.status).toBe(503);
      expect(response.headers.get("content-type")).toStartWith("text/plain");
      expect(await response.text()).toBe(HINT);
    }
    // Generated later: served without a restart.
    writeFileSync(join(pending, "index.html"), landingHtml);
    expect((await handle(plugin, "/dex/")).status).toBe(200);
    renameSync(join(pending, "index.html"), join(pending, "index.old"));
    expect((await handle(plugin, "/")).status).toBe(503);
  });
});

describe("over a real listening server", () => {
  let server: ReturnType<typeof listen>;
  beforeAll(() => {
    server = listen(new Elysia().get("/api/", () => "discovery").use(dashboardRoutes(dashboards)));
  });
  afterAll(() => server.stop());

  test("serves the landing page, the dashboard and its files", async () => {
    const landing = await rawGet(server.port, "/");
    expect(landing.status).toBe(200);
    expect(landing.headers["content-type"]).toStartWith("text/html");
    expect(landing.body).toBe(landingHtml);
    const dex = await rawGet(server.port, "/dex");
    expect(dex.status).toBe(200);
    expect(dex.body).toBe(dexHtml);
    const css = await rawGet(server.port, "/dex/style.css");
    expect(css.headers["content-type"]).toStartWith("text/css");
    expect((await rawGet(server.port, "/api/")).body).toBe("discovery");
  });

  const escapes = [
    "/dex/../secret.txt",
    "/dex/../../outside/outside.txt",
    "/dex/%2e%2e/secret.txt",
    "/dex/%2E%2E/secret.txt",
    "/dex/.%2e/secret.txt",
    "/dex/..%2fsecret.txt",
    "/dex/..%2Fsecret.txt",
    "/dex/%2e%2e%2fsecret.txt",
    "/dex/sub/..%2f..%2fsecret.txt",
    "/dex/..%5csecret.txt",
    "/dex/..\\secret.txt",
    "/dex/%252e%252e/secret.txt",
    "/dex//etc/passwd",
    "/dex/%2fetc%2fpasswd",
    `/dex/${encodeURIComponent(join(root, "secret.txt"))}`,
    "/dex/style.css%00",
    "/dex/%00/../secret.txt",
    "/dex/link-out",
    "/dex/link-dir-out/outside.txt",
    "/dex/link-sibling.txt",
    "/dex/.hidden",
    "/dex/%2ehidden",
    "/dex/%E0%A4%A",
  ];
  for (const target of escapes) {
    test(`never leaves the dashboard folder: ${target}`, async () => {
      const response = await rawGet(server.port, target);
      // 404 from our router or handler; 400 when Bun itself refuses the request line.
      expect([400, 404]).toContain(response.status);
      expect(response.body).not.toContain(SECRET_ROOT);
      expect(response.body).not.toContain(SECRET_OUTSIDE);
    });
  }
});

describe("resolveDashboardFile", () => {
  const folder = () => join(root, "dex");

  test("resolves plain files, directories to their index.html, and inside symlinks", async () => {
    expect(await resolveDashboardFile(folder(), "")).toBe(join(root, "dex", "index.html"));
    expect(await resolveDashboardFile(folder(), "style.css")).toBe(join(root, "dex", "style.css"));
    expect(await resolveDashboardFile(folder(), "sub/")).toBe(join(root, "dex", "sub", "index.html"));
    expect(await resolveDashboardFile(folder(), "sub")).toBe(join(root, "dex", "sub", "index.html"));
    expect(await resolveDashboardFile(folder(), "link-in.css")).toBe(join(root, "dex", "style.css"));
  });

  test("refuses every segment that could leave the folder, even when it reaches the handler decoded", async () => {
    const refused = [
      "..", "../secret.txt", "%2e%2e/secret.txt", "..%2fsecret.txt", "sub/../../secret.txt", "..%5csecret.txt",
      "..\\secret.txt", "%00", "style.css%00", "/etc/passwd", "%2fetc%2fpasswd", "sub//notes.txt", ".", "./style.css",
      "link-out", "link-dir-out/outside.txt", "link-sibling.txt", ".hidden", "%E0%A4%A", "nope",
    ];
    for (const rest of refused) expect(await resolveDashboardFile(folder(), rest)).toBeNull();
  });

  test("a dashboard folder that does not exist resolves nothing", async () => {
    expect(await resolveDashboardFile(join(root, "missing"), "")).toBeNull();
  });
});
