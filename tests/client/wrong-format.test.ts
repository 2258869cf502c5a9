/**
 * `arrow402 query` against a server that answers a free query in a form other than the one asked
 * for (a real HTTP server written to misbehave; arrow402 itself answers what `Accept` names or
 * 406). Nothing is written, and the message says what came instead.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/fixtures.ts";
import { runCli } from "./cli.ts";

const ANSWERS: Record<string, () => Response> = {
  "/csv/api/query": () => new Response("a,b\n1,2\n", { headers: { "content-type": "text/csv; charset=utf-8" } }),
  "/not-parquet/api/query": () => new Response("a,b\n1,2\n", { headers: { "content-type": "application/vnd.apache.parquet" } }),
  "/refuses/api/query": () => new Response("Not acceptable: this server sends application/vnd.apache.arrow.stream", { status: 406 }),
};

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (request) => ANSWERS[new URL(request.url).pathname]?.() ?? new Response("not found", { status: 404 }),
});
afterAll(() => server.stop(true));
const dir = tempDir("arrow402-wrong-format-");

test.each([
  ["csv", "arrow402: the server answered with text/csv; charset=utf-8 instead of application/vnd.apache.parquet; nothing was written"],
  ["not-parquet", "arrow402: the server's answer is not a Parquet file: it does not start with the Parquet magic 'PAR1'"],
  ["refuses", "arrow402: the server cannot send this format (406): Not acceptable: this server sends application/vnd.apache.arrow.stream"],
])("%s: exit 1, nothing written", async (path, message) => {
  const file = join(dir, `${path}.parquet`);
  const run = await runCli(["query", `http://127.0.0.1:${server.port}/${path}`, "SELECT * FROM t", "--output", file]);
  expect(run.code).toBe(1);
  expect(run.stderr).toBe(`${message}\n`);
  expect(existsSync(file)).toBe(false);
});
