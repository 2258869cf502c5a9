/**
 * Exact values in the JSON formats (DESIGN §16), over HTTP from a real server on a loopback port and
 * read with a plain `JSON.parse`: an int64 beyond ±(2^53 - 1) is a string of its exact digits, one
 * that fits a number. (CSV keeps bare digits: tests/e2e/formats.test.ts.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir, typesConfig } from "../support/fixtures.ts";
import { createExactIntsDatabase, EXACT_INTS } from "./support.ts";

const SQL = "SELECT id, v FROM ints ORDER BY id";
let server: RunningServer;

beforeAll(async () => {
  const dir = tempDir();
  createExactIntsDatabase(join(dir, "types.sqlite"));
  server = await startServer(typesConfig(dir, { tables: [{ name: "ints", description: "int64 at the edge of 2^53" }] }), { workers: 1 });
});
afterAll(async () => {
  await server?.stop();
});

async function body(query: string, accept?: string): Promise<string> {
  const response = await fetch(`${server.url}/api/query?${query}query=${encodeURIComponent(SQL)}`, accept === undefined ? {} : { headers: { accept } });
  expect(response.status).toBe(200);
  return response.text();
}

const lines = (text: string) => text.trimEnd().split("\n").map((line) => JSON.parse(line) as unknown);

test.each([
  ["JSON by Accept", () => body("", "application/json"), (text: string) => JSON.parse(text) as unknown],
  ["JSON by ?format=", () => body("format=json&"), (text: string) => JSON.parse(text) as unknown],
  ["NDJSON by Accept", () => body("", "application/x-ndjson"), lines],
  ["NDJSON by ?format=", () => body("format=ndjson&"), lines],
])("%s, read with JSON.parse: the big ones as strings of their exact digits, the others as numbers", async (_how, fetchBody, parse) => {
  expect(parse(await fetchBody())).toEqual(EXACT_INTS.map(([id, , seen]) => ({ id, v: seen })));
});
