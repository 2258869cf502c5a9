/**
 * Item 7's small-query baseline: a bare Bun.serve that runs the query through the same driver and
 * pool as arrow402's PostgreSQL engine (Bun.SQL, `max` connections, engine.ts's options) for every
 * request, checks the row count, and returns arrow402's own Arrow body for it (it encodes nothing).
 * Run as its own process: `bun bench/pg-bare-server.ts URL MAX_CONNECTIONS ROWS BODY_FILE SQL`.
 */
import { SQL } from "bun";

const [url, max, rows, file, query] = process.argv.slice(2);
if (query === undefined) throw new Error("usage: bun bench/pg-bare-server.ts URL MAX_CONNECTIONS ROWS BODY_FILE SQL");
const expected = Number(rows);
const sql = new SQL(url!, { max: Number(max), idleTimeout: 60, connectionTimeout: 10 });
const body = new Uint8Array(await Bun.file(file!).arrayBuffer());
const headers = { "content-type": "application/vnd.apache.arrow.stream" };
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch() {
    const found = (await sql.unsafe(query).values()) as unknown[][];
    // A wrong count is a non-2xx: the load generator throws on it.
    if (found.length !== expected) return new Response(`${found.length} rows, expected ${expected}`, { status: 500 });
    return new Response(body, { headers });
  },
});
console.log(`bare PostgreSQL server on http://127.0.0.1:${server.port}`);
