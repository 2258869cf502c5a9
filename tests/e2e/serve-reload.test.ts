/**
 * SIGHUP reloads the config of a running `arrow402 serve` (ARCHITECTURE.md §11 "Operations"): a new
 * price answers in the next 402; a broken file is refused, every problem named in the log, and the
 * old price keeps answering; a change that needs a restart is reported and not applied; the log
 * format itself follows the file. SIGTERM then exits 0.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tableFromIPC } from "apache-arrow";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PAY_TO } from "../support/fixtures.ts";
import { spawnServe, type ServeProcess } from "../ops/serve-process.ts";
import { opsFixture, opsRawConfig, queryPath, removeFixture } from "../ops/support.ts";

let dir: string;
let configPath: string;
let child: ServeProcess;

const tables = (amount: unknown) => [
  { name: "kinds" },
  { name: "items", price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: amount }] },
];
const write = (raw: Record<string, unknown>) => writeFileSync(configPath, Bun.YAML.stringify(raw, null, 2));
const json = (amount: unknown, server: Record<string, unknown> = {}) => opsRawConfig({ server: { bind: "127.0.0.1:0", log: "json", ...server }, tables: tables(amount) });

beforeAll(async () => {
  dir = opsFixture();
  configPath = join(dir, "arrow402.yaml");
  write(json("0.001"));
  child = await spawnServe(configPath);
}, 60_000);
afterAll(async () => {
  await child?.kill();
  removeFixture(dir);
});

/** The first offer's amount for 10 rows of items (6 decimals). */
async function quote(): Promise<string> {
  const response = await fetch(child.url + queryPath("SELECT id FROM items WHERE id <= 10"));
  expect(response.status).toBe(402);
  return (await response.json()).accepts[0].amount;
}

/** Sends SIGHUP and waits for the n-th reload event (applied or refused). */
async function reload(): Promise<Record<string, any>> {
  const before = child.events().filter((e) => e.event?.startsWith("config.")).length;
  child.signal("SIGHUP");
  await child.waitFor(() => child.events().filter((e) => e.event?.startsWith("config.")).length > before);
  return child.events().filter((e) => e.event?.startsWith("config.")).at(-1)!;
}

test("a new price answers after SIGHUP", async () => {
  expect(await quote()).toBe("10000");
  write(json("0.002"));
  expect(await reload()).toMatchObject({ level: "info", event: "config.reloaded", changed: ["tables"], needs_restart: [] });
  expect(await quote()).toBe("20000");
});

test("a broken file is refused, every problem named, and the old price still answers", async () => {
  write({ ...json(0.003), tables: [...tables(0.003), { name: "items", extra: true }], limits: { max_rows: "many" } });
  const refused = await reload();
  expect(refused).toMatchObject({ level: "error", event: "config.rejected", source: configPath });
  const problems: string[] = refused.problems;
  expect(problems.some((p) => p.startsWith("tables[1].price_tags[0].amount_per_item: got the number 0.003"))).toBe(true);
  expect(problems.some((p) => p.startsWith("tables[2].extra: unknown key"))).toBe(true);
  expect(problems.some((p) => p.startsWith("limits.max_rows: got the text \"many\""))).toBe(true);
  expect(await quote()).toBe("20000");
});

test("a change that needs a restart is reported and not applied; the rest is", async () => {
  write(json("0.003", { bind: "127.0.0.1:1" }));
  const reloaded = await reload();
  expect(reloaded).toMatchObject({ level: "warn", event: "config.reloaded", changed: ["tables"], needs_restart: ["server.bind", "server.base_url"] });
  expect(await quote()).toBe("30000");
  // Still answering where it started, and offers still name that address.
  const body = await (await fetch(child.url + queryPath("SELECT id FROM items WHERE id <= 10"))).json();
  expect(body.resource.url).toStartWith(child.url);
});

test("the log format follows the file: text lines, a refused reload's problems on stderr", async () => {
  write(opsRawConfig({ server: { bind: "127.0.0.1:0", log: "text" }, tables: tables("0.003") }));
  child.signal("SIGHUP");
  await child.waitFor((line) => /info  config reloaded from .*arrow402\.yaml$/.test(line));
  await fetch(child.url + queryPath("SELECT id FROM kinds"));
  await child.waitFor((line) => /info  GET \/api\/query 200 [\d.]+ms route=\/api\/query client=127\.0\.0\.1 table=kinds rows=4 bytes=\d+$/.test(line));
  write({ ...opsRawConfig({ server: { bind: "127.0.0.1:0", log: "text" }, tables: tables("0.004") }), tables: "none" });
  child.signal("SIGHUP");
  await child.waitFor((line) => /error config reload from .* refused \(1 problem\); still serving the previous config/.test(line));
  await child.waitFor((line) => line.startsWith("  tables: got the text \"none\"; write a list"));
  expect(child.err.filter((line) => line.startsWith("  "))).toHaveLength(1);
  expect(await quote()).toBe("30000");
});

test("a larger limits.max_query_bytes makes room in request heads too, as at start-up", async () => {
  // 25,000 spaces in a literal: ~25 KB of SQL, ~75 KB URL-encoded, over the 64 KiB heads start with.
  const path = queryPath(`SELECT id FROM kinds WHERE label = '${" ".repeat(25_000)}'`);
  expect((await fetch(child.url + path)).status).toBe(431);
  write({ ...json("0.003"), limits: { max_query_bytes: 40_000 } });
  const reloaded = await reload();
  expect(reloaded.event).toBe("config.reloaded");
  expect(reloaded.changed).toContain("limits.max_query_bytes");
  const response = await fetch(child.url + path);
  expect(response.status).toBe(200);
  expect(tableFromIPC(new Uint8Array(await response.arrayBuffer())).numRows).toBe(0);
});

test("SIGTERM exits 0", async () => {
  child.signal("SIGTERM");
  expect(await child.exited).toBe(0);
});
