/**
 * The small queries' baseline: a bare Bun.serve returning fixed bytes (the Arrow body arrow402
 * returned for the same query) with the same content type, one body per path: FILE number i is
 * served at `/i`. Run as its own process: `bun bench/bare-server.ts FILE...`.
 */
const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: bun bench/bare-server.ts BODY_FILE...");
const headers = { "content-type": "application/vnd.apache.arrow.stream" };
const routes: Record<string, () => Response> = {};
for (const [index, file] of files.entries()) {
  const body = new Uint8Array(await Bun.file(file).arrayBuffer());
  routes[`/${index}`] = () => new Response(body, { headers });
}
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, routes, fetch: () => new Response("Not Found", { status: 404 }) });
console.log(`bare server on http://127.0.0.1:${server.port}`);
export {};
