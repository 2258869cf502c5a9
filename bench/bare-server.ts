/**
 * Item 4's baseline: a bare Bun.serve returning fixed bytes (the Arrow body arrow402 returned for
 * the same query) with the same content type. Run as its own process: `bun bench/bare-server.ts FILE`.
 */
const [file] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: bun bench/bare-server.ts BODY_FILE");
const body = new Uint8Array(await Bun.file(file).arrayBuffer());
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(body, { headers: { "content-type": "application/vnd.apache.arrow.stream" } }),
});
console.log(`bare server on http://127.0.0.1:${server.port}`);
export {};
