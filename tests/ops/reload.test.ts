/**
 * SIGHUP reloads (ARCHITECTURE.md §11 "Operations"), in process: what a reload applies and what needs a
 * restart (a table of config changes), and through a real server that the swap is atomic — under
 * concurrent requests each 402 comes whole from the old config or the new one — that a config the
 * database does not match is refused with the old one still serving, and that the metrics carry on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";
import { ConfigError } from "../../src/errors.ts";
import { NEEDS_RESTART, planReload, RELOADABLE } from "../../src/ops/reload.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { PAY_TO } from "../support/fixtures.ts";
import { opsFixture, opsRawConfig, queryPath, removeFixture, scrape } from "./support.ts";

const resolve = (raw: Record<string, unknown>) => resolveConfig(raw, { baseDir: "/srv/arrow402", env: {} });
const itemsAt = (amount: string) => [
  { name: "kinds" },
  { name: "items", price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: amount }] },
];

describe("what a reload applies and what needs a restart", () => {
  const base = opsRawConfig();
  const server = base.server as Record<string, unknown>;
  test.each<[string, Record<string, unknown>, string[], string[]]>([
    ["nothing", {}, [], []],
    ["a price", { tables: itemsAt("0.002") }, ["tables"], []],
    ["the facilitator", { facilitator: { url: "https://f.example/x402" } }, ["facilitator"], []],
    ["the payment description", { payment: { default_description: "Data" } }, ["payment"], []],
    ["the metrics switch and token", { server: { ...server, metrics: true, metrics_token: "t" } }, ["server.metrics", "server.metrics_token"], []],
    ["the log format and drain time", { server: { ...server, log: "json", shutdown_ms: 5 } }, ["server.log", "server.shutdown_ms"], []],
    ["dashboards", { dashboards: { entries: [{ slug: "k", title: "K", table: "kinds" }] } }, ["dashboards"], []],
    [
      "limits a reload can change",
      { limits: { max_query_bytes: 100, max_concurrent_per_client: 2, mcp_max_rows: 10, receive_timeout_ms: 10, max_refused_payments_per_minute: 3, client_ipv6_prefix: 48, mcp_max_bytes: 4096 } },
      [
        "limits.max_query_bytes",
        "limits.max_concurrent_per_client",
        "limits.mcp_max_rows",
        "limits.mcp_max_bytes",
        "limits.receive_timeout_ms",
        "limits.max_refused_payments_per_minute",
        "limits.client_ipv6_prefix",
      ],
      [],
    ],
    [
      "limits the workers and the listener started with",
      { limits: { max_rows: 5, query_timeout_ms: 5, send_timeout_ms: 5, keep_alive_seconds: 5 } },
      [],
      ["limits.max_rows", "limits.query_timeout_ms", "limits.send_timeout_ms", "limits.keep_alive_seconds"],
    ],
    ["the database", { database: { sqlite: "other.sqlite" } }, [], ["databases"]],
    ["the ledger", { ledger: { path: "other-ledger.sqlite" } }, [], ["ledger"]],
    ["the bind address, with the base URL that follows it", { server: { bind: "127.0.0.1:9999" } }, [], ["server.bind", "server.base_url"]],
    ["the bind address, with a fixed base URL", { server: { bind: "127.0.0.1:9999", base_url: "http://127.0.0.1:0" } }, [], ["server.bind"]],
  ])("%s", (_name, change, changed, needsRestart) => {
    const running = resolve(base);
    const next = resolve({ ...base, ...change });
    const plan = planReload(running, next);
    expect(plan.changed).toEqual(changed);
    expect(plan.needsRestart).toEqual(needsRestart);
    // What needs a restart keeps its running value; everything else is the new config's.
    const expected: Config = {
      ...next,
      server: { ...next.server, host: running.server.host, port: running.server.port, baseUrl: needsRestart.includes("server.base_url") ? running.server.baseUrl : next.server.baseUrl },
      databases: running.databases,
      ledger: running.ledger,
      limits: { ...next.limits, maxRows: running.limits.maxRows, queryTimeoutMs: running.limits.queryTimeoutMs, sendTimeoutMs: running.limits.sendTimeoutMs, keepAliveSeconds: running.limits.keepAliveSeconds },
    };
    expect(plan.config).toEqual(expected);
  });

  test("every limit is in one list: applied, or needing a restart", () => {
    const paths = [...RELOADABLE, ...NEEDS_RESTART].map((setting) => setting.path);
    const limits = Object.keys(resolve(base).limits).map((key) => `limits.${key.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`)}`);
    expect(limits.length).toBeGreaterThan(5);
    for (const path of limits) expect(paths.filter((listed) => listed === path)).toEqual([path]);
  });
});

describe("through a real server", () => {
  let dir: string;
  let server: RunningServer;
  const configFor = (amount: string, description: string, extra: Record<string, unknown> = {}) =>
    resolveConfig(opsRawConfig({ tables: itemsAt(amount), payment: { default_description: description }, ...extra }), { baseDir: dir, env: {} });

  beforeAll(async () => {
    dir = opsFixture();
    server = await startServer(configFor("0.001", "config A"), { workers: 2 });
  });
  afterAll(async () => {
    await server?.stop();
    removeFixture(dir);
  });

  const quote = async () => {
    const response = await fetch(server.url + queryPath("SELECT id FROM items WHERE id <= 10"));
    expect(response.status).toBe(402);
    const body = await response.json();
    return { amount: body.accepts[0].amount as string, description: body.resource.description as string };
  };

  test("under concurrent requests every 402 comes whole from one config", async () => {
    const seen = new Set<string>();
    let reloading = true;
    const load = async () => {
      while (reloading) {
        const { amount, description } = await quote();
        seen.add(`${description}: ${amount}`);
      }
    };
    const clients = Array.from({ length: 4 }, load);
    // At least 40 reloads, and more (bounded) on a busy machine until both configs have answered.
    for (let i = 0; i < 40 || (seen.size < 2 && i < 400); i++) {
      const outcome = await server.reload(() => (i % 2 === 0 ? configFor("0.003", "config B") : configFor("0.001", "config A")), "test");
      expect(outcome.applied).toBe(true);
      await Bun.sleep(5);
    }
    reloading = false;
    await Promise.all(clients);
    // 10 rows at 0.001 and at 0.003 (6 decimals); any other pairing would be a mix of two configs.
    expect([...seen].sort()).toEqual(["config A - 10 rows: 10000", "config B - 10 rows: 30000"]);
  });

  test("a config naming a table the database lacks is refused, every problem listed; the old one keeps serving", async () => {
    await server.reload(() => configFor("0.001", "config A"), "test");
    const broken = resolveConfig(
      opsRawConfig({ tables: [...itemsAt("0.005"), { name: "missing_one" }, { name: "big", columns: { nope: "x" } }] }),
      { baseDir: dir, env: {} },
    );
    const outcome = await server.reload(() => broken, "test");
    expect(outcome).toEqual({
      applied: false,
      problems: ["tables[2].name: no table or view named 'missing_one' in the database", "tables[3].columns.nope: no column 'nope' in table 'big'"],
    });
    expect(await quote()).toEqual({ amount: "10000", description: "config A - 10 rows" });
  });

  test("a file that does not validate is refused with its problems", async () => {
    const outcome = await server.reload(() => {
      throw new ConfigError(["tables[1].price_tags[0].amount_per_item: got the number 0.002"]);
    }, "test");
    expect(outcome).toEqual({ applied: false, problems: ["tables[1].price_tags[0].amount_per_item: got the number 0.002"] });
    expect((await quote()).amount).toBe("10000");
  });

  test("what needs a restart keeps running as it was; metrics switched on by a reload count from the start", async () => {
    await (await fetch(server.url + queryPath("SELECT id FROM kinds"))).arrayBuffer();
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    const outcome = await server.reload(() => configFor("0.002", "config C", { server: { bind: "127.0.0.1:0", metrics: true }, limits: { max_rows: 2, max_query_bytes: 60 } }), "test");
    expect(outcome).toEqual({ applied: true, changed: ["server.metrics", "payment", "limits.max_query_bytes", "tables"], needsRestart: ["limits.max_rows"] });
    // max_rows stays as the workers were started (1,000,000): four rows are served.
    expect((await fetch(server.url + queryPath("SELECT id FROM kinds"))).status).toBe(200);
    // max_query_bytes is applied.
    const long = await fetch(server.url + queryPath(`SELECT id FROM kinds WHERE id > 0 AND id < 100 AND id <> 42 AND id <> 43 AND id <> 44`));
    expect(long.status).toBe(400);
    expect(await long.text()).toContain("60");
    const metrics = await scrape(server.url);
    expect(metrics.value("arrow402_http_requests_total", { route: "/api/query", status: "200" })).toBeGreaterThanOrEqual(2);
    expect(metrics.value("arrow402_config_reloads_total", { result: "rejected" })).toBe(2);
  });
});
