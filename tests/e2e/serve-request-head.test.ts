/**
 * `bun src/main.ts serve` started plainly (no --max-http-header-size, no `bun run` script):
 * a query over max_query_bytes reaches arrow402 and gets its 400 naming the limit, not Bun's bare
 * 431 for a request head over 16 KiB (ARCHITECTURE.md §4); the limit on request heads is documented and
 * still applies beyond it; SIGTERM still stops the server with exit code 0.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createTypesDatabase, PAY_TO, tempDir } from "../support/fixtures.ts";

const ROOT = join(import.meta.dir, "../..");
let proc: ReturnType<typeof Bun.spawn>;
let url: string;

beforeAll(async () => {
  const dir = tempDir("arrow402-serve-");
  createTypesDatabase(join(dir, "types.sqlite"));
  const config = [
    "database: { sqlite: types.sqlite }",
    "ledger: { path: ledger.sqlite }",
    "tables:",
    "  - { name: kinds, description: Free }",
    "  - name: items",
    "    description: Paid",
    `    price_tags: [{ type: per_row, pay_to: "${PAY_TO}", token: usdc/base_sepolia, amount_per_item: "0.001" }]`,
  ].join("\n");
  await Bun.write(join(dir, "arrow402.yaml"), config);
  proc = Bun.spawn(["bun", join(ROOT, "src/main.ts"), "serve", "--config", "arrow402.yaml", "--bind", "127.0.0.1:0"], {
    cwd: dir,
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!/on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  url = /on (http:\/\/\S+)/.exec(text)![1]!;
}, 60_000);

afterAll(() => {
  if (proc.exitCode === null) proc.kill("SIGKILL");
});

const query = (sql: string) => fetch(`${url}/api/query?query=${encodeURIComponent(sql)}`);

test("a 20 KB query is refused with a 400 naming max_query_bytes, not a 431", async () => {
  const sql = `SELECT id FROM kinds WHERE label = '${"x".repeat(20_000)}'`;
  const res = await query(sql);
  expect(res.status).toBe(400);
  expect(await res.text()).toBe(`Query is ${sql.length} bytes; the server's limit (max_query_bytes) is 16384 bytes: shorten the query`);
});

test("so is one whose URL encoding triples it (16,385 bytes of multi-byte text, 49 KB encoded)", async () => {
  const sql = `SELECT id FROM kinds WHERE label = '${"é".repeat(8174)}'`;
  expect(Buffer.byteLength(sql)).toBe(16_385);
  const res = await query(sql);
  expect(res.status).toBe(400);
  expect(await res.text()).toContain("(max_query_bytes) is 16384 bytes");
});

test("queries within the limit still run", async () => {
  const res = await query("SELECT id FROM kinds ORDER BY id");
  expect(res.status).toBe(200);
  const quote = await query(`SELECT id FROM items WHERE name <> '${"x".repeat(12_000)}'`);
  // 12 KB fits twice (request line and signed payload) in the raised 64 KiB head limit.
  expect(quote.status).toBe(402);
});

test("a request head over the raised limit (64 KiB) is still Bun's 431", async () => {
  const res = await fetch(`${url}/api/`, { headers: { "x-padding": "a".repeat(70_000) } });
  expect(res.status).toBe(431);
  expect((await fetch(`${url}/api/`, { headers: { "x-padding": "a".repeat(40_000) } })).status).toBe(200);
});

test("SIGTERM stops the server with exit code 0", async () => {
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
});
