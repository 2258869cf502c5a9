import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/config/load.ts";
import { DEFAULT_RPC_URLS } from "../../src/config/rpc.ts";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import { DEVNET_TOKEN, FULL_EXAMPLE_YAML, PAY_TO, minimal, perRow } from "./examples.ts";

const BASE = "/srv/arrow402";

describe("a minimal config gets every default", () => {
  test("defaults of ARCHITECTURE.md §2", () => {
    const config = resolveConfig(minimal(), { baseDir: BASE, env: {} });
    expect(config).toEqual({
      server: {
        host: "127.0.0.1",
        port: 4021,
        baseUrl: "http://127.0.0.1:4021",
        corsOrigins: ["*"],
        trustProxy: null,
        metrics: false,
        metricsToken: null,
        log: "text",
        shutdownMs: 10000,
      },
      facilitator: { url: "https://x402.org/facilitator", timeoutMs: 10000, headers: {} },
      databases: { main: { engine: "sqlite", path: `${BASE}/db.sqlite` } },
      payment: { maxTimeoutSeconds: 300, defaultDescription: "Query execution payment" },
      ledger: { path: `${BASE}/arrow402-ledger.sqlite` },
      limits: { maxRows: 1000000, queryTimeoutMs: 10000, maxQueryBytes: 16384, maxConcurrentPerClient: 0, sendTimeoutMs: 60000, spillBudgetMb: 4096, unsentBudgetMb: 256, receiveTimeoutMs: 10000, keepAliveSeconds: 75, maxRefusedPaymentsPerMinute: 10, clientIpv6Prefix: 64, mcpMaxRows: 1000, mcpMaxBytes: 1048576, maxReplays: 3 },
      rpcUrls: DEFAULT_RPC_URLS,
      tokens: BUILTIN_TOKENS,
      tables: [{ name: "items", database: "main", source: "items", description: "", columns: {}, priceTags: [] }],
    });
    expect("dashboards" in config).toBe(false);
  });

  test("empty YAML values count as absent", () => {
    const config = resolveConfig(minimal({ server: null, tokens: null, tables: [{ name: "items", price_tags: null, description: null }] }), {
      baseDir: BASE,
      env: {},
    });
    expect(config.server.port).toBe(4021);
    expect(config.tables[0]).toEqual({ name: "items", database: "main", source: "items", description: "", columns: {}, priceTags: [] });
  });
});

describe("the full example of ARCHITECTURE.md §2", () => {
  const config = resolveConfig(Bun.YAML.parse(FULL_EXAMPLE_YAML), { baseDir: BASE, env: { FACILITATOR_TOKEN: "s3cret" } });

  test("server, facilitator and limits", () => {
    expect(config.server).toMatchObject({ host: "127.0.0.1", port: 4021, baseUrl: "http://localhost:4021", corsOrigins: ["*"], trustProxy: null });
    expect(config.facilitator).toEqual({ url: "https://x402.org/facilitator", timeoutMs: 10000, headers: { Authorization: "Bearer s3cret" } });
    expect(config.databases).toEqual({ main: { engine: "sqlite", path: `${BASE}/data/market.sqlite` } });
    expect(config.ledger.path).toBe(`${BASE}/arrow402-ledger.sqlite`);
  });

  test("custom token with defaults for symbol and label, address checksummed", () => {
    expect(config.tokens["usdc/devnet"]).toEqual({
      key: "usdc/devnet",
      chainId: 31337,
      network: "eip155:31337",
      address: DEVNET_TOKEN as `0x${string}`,
      name: "USD Coin",
      version: "2",
      decimals: 6,
      networkLabel: "chain 31337",
      symbol: "USDC",
    });
    expect(config.tokens["usdc/base"]).toEqual(BUILTIN_TOKENS["usdc/base"]!);
  });

  test("tables, price tags in smallest units", () => {
    const baseSepolia = BUILTIN_TOKENS["usdc/base_sepolia"]!;
    const base = BUILTIN_TOKENS["usdc/base"]!;
    const payTo = PAY_TO as `0x${string}`;
    expect(config.tables).toEqual([
      {
        name: "swaps",
        database: "main",
        source: "swaps",
        description: "DEX swaps",
        columns: { amount_usd: "Swap size in US dollars" },
        priceTags: [
          { type: "per_row", payTo, token: baseSepolia, amountPerItem: 2000n, quote: "count", isDefault: true },
          { type: "per_row", payTo, token: baseSepolia, amountPerItem: 1000n, quote: "count", minItems: 100, isDefault: false },
          { type: "fixed", payTo, token: base, amount: 1000000n, description: "Any query, flat", isDefault: false },
          { type: "metadata_price", payTo, token: base, amount: 10000n },
        ],
      },
      { name: "blocks", database: "main", source: "blocks", description: "", columns: {}, priceTags: [] },
    ]);
  });

  test("dashboards with defaults filled", () => {
    expect(config.dashboards).toEqual({
      root: `${BASE}/dashboards`,
      entries: [{ slug: "blocks", title: "Blocks", description: "Blocks per hour", tags: ["Base"], table: "blocks", enabled: true }],
    });
  });
});

describe("resolution rules", () => {
  const resolve = (raw: Record<string, unknown>, env: Record<string, string> = {}) => resolveConfig(raw, { baseDir: BASE, env });

  test("without is_default the first per_row/fixed tag is the default", () => {
    const tags = resolve(
      minimal({
        tables: [
          {
            name: "items",
            price_tags: [
              { type: "metadata_price", pay_to: PAY_TO, token: "usdc/base", amount: "0.01" },
              { type: "fixed", pay_to: PAY_TO, token: "usdc/base", amount: "1" },
              perRow(),
            ],
          },
        ],
      }),
    ).tables[0]!.priceTags;
    expect(tags.map((tag) => (tag.type === "metadata_price" ? "meta" : tag.isDefault))).toEqual(["meta", true, false]);
  });

  test("an explicit is_default wins over order", () => {
    const tags = resolve(minimal({ tables: [{ name: "items", price_tags: [perRow(), perRow({ amount_per_item: "0.1", is_default: true })] }] }))
      .tables[0]!.priceTags;
    expect(tags.map((tag) => (tag.type === "metadata_price" ? "meta" : tag.isDefault))).toEqual([false, true]);
  });

  test("per_row optional fields", () => {
    const [tag] = resolve(
      minimal({ tables: [{ name: "items", price_tags: [perRow({ min_items: 0, max_items: 500, min_total_amount: "0.05", description: "Bulk" })] }] }),
    ).tables[0]!.priceTags;
    expect(tag).toEqual({
      type: "per_row",
      payTo: PAY_TO as `0x${string}`,
      token: BUILTIN_TOKENS["usdc/base_sepolia"]!,
      amountPerItem: 2000n,
      minItems: 0,
      maxItems: 500,
      minTotalAmount: 50000n,
      description: "Bulk",
      quote: "count",
      isDefault: true,
    });
  });

  test.each([
    [undefined, "count"],
    ["count", "count"],
    ["limit", "limit"],
  ])("per_row quote %p resolves to %p", (quote, expected) => {
    const [tag] = resolve(minimal({ tables: [{ name: "items", price_tags: [perRow(quote === undefined ? {} : { quote })] }] })).tables[0]!.priceTags;
    expect(tag).toMatchObject({ type: "per_row", quote: expected });
  });

  test("lowercase pay_to is checksummed", () => {
    const [tag] = resolve(minimal({ tables: [{ name: "items", price_tags: [perRow({ pay_to: PAY_TO.toLowerCase() })] }] })).tables[0]!.priceTags;
    expect(tag?.payTo).toBe(PAY_TO as `0x${string}`);
  });

  test("custom token: integer chain, explicit symbol and label, other decimals", () => {
    const config = resolve(
      minimal({
        tokens: { "eurc/devnet": { chain: 31337, address: DEVNET_TOKEN, name: "EURC", version: "1", decimals: 2, symbol: "EUR", network_label: "Anvil" } },
        tables: [{ name: "items", price_tags: [perRow({ token: "eurc/devnet", amount_per_item: "0.05" })] }],
      }),
    );
    expect(config.tokens["eurc/devnet"]).toMatchObject({ chainId: 31337, network: "eip155:31337", decimals: 2, symbol: "EUR", networkLabel: "Anvil" });
    const [tag] = config.tables[0]!.priceTags;
    expect(tag?.type === "per_row" && tag.amountPerItem).toBe(5n);
  });

  const servers: [string, Record<string, unknown>, { host: string; port: number; baseUrl: string }][] = [
    ["port 0", { bind: "127.0.0.1:0" }, { host: "127.0.0.1", port: 0, baseUrl: "http://127.0.0.1:0" }],
    ["a hostname", { bind: "localhost:8080" }, { host: "localhost", port: 8080, baseUrl: "http://localhost:8080" }],
    ["IPv6 in brackets", { bind: "[::1]:4021" }, { host: "::1", port: 4021, baseUrl: "http://[::1]:4021" }],
    ["all interfaces", { bind: "0.0.0.0:4021" }, { host: "0.0.0.0", port: 4021, baseUrl: "http://localhost:4021" }],
    ["base_url trailing slash", { base_url: "https://data.example.com/" }, { host: "127.0.0.1", port: 4021, baseUrl: "https://data.example.com" }],
    ["base_url with a path", { base_url: "https://example.com/arrow402/" }, { host: "127.0.0.1", port: 4021, baseUrl: "https://example.com/arrow402" }],
  ];
  for (const [name, server, expected] of servers) {
    test(`server: ${name}`, () => {
      expect(resolve(minimal({ server })).server).toMatchObject(expected);
    });
  }

  test("facilitator url loses its trailing slash; CORS origins kept", () => {
    const config = resolve(minimal({ facilitator: { url: "http://127.0.0.1:9000/" }, server: { cors_origins: ["https://a.example", "http://localhost:3000"] } }));
    expect(config.facilitator.url).toBe("http://127.0.0.1:9000");
    expect(config.server.corsOrigins).toEqual(["https://a.example", "http://localhost:3000"]);
  });

  test("absolute paths stay, relative ones resolve against baseDir, relative baseDir against the cwd", () => {
    const config = resolveConfig(minimal({ database: { sqlite: "/data/x.sqlite" }, ledger: { path: "../ledger/l.sqlite" }, dashboards: { root: "site" } }), {
      baseDir: "conf",
      env: {},
    });
    expect(config.databases).toEqual({ main: { engine: "sqlite", path: "/data/x.sqlite" } });
    expect(config.ledger.path).toBe(`${process.cwd()}/ledger/l.sqlite`);
    expect(config.dashboards).toEqual({ root: `${process.cwd()}/conf/site`, entries: [] });
  });

  test("dashboard entries: defaults, disabled entries, table name as configured", () => {
    const config = resolve(
      minimal({
        tables: [{ name: "Items" }],
        dashboards: { entries: [{ slug: "a-1", title: "A", table: "items" }, { slug: "b_2", title: "B", table: "Items", enabled: false, tags: ["x"] }] },
      }),
    );
    expect(config.dashboards).toEqual({
      root: `${BASE}/dashboards`,
      entries: [
        { slug: "a-1", title: "A", description: "", tags: [], table: "Items", enabled: true },
        { slug: "b_2", title: "B", description: "", tags: ["x"], table: "Items", enabled: false },
      ],
    });
  });
});

describe("production keys", () => {
  test("rpc_urls add or replace the built-in defaults; trust_proxy is matched case-insensitively", () => {
    const config = resolveConfig(
      minimal({
        server: { trust_proxy: "X-Forwarded-For" },
        rpc_urls: { "31337": "http://127.0.0.1:8545/", "8453": "https://base.example/rpc" },
        limits: { max_concurrent_per_client: 4, send_timeout_ms: 30000, spill_budget_mb: 0, receive_timeout_ms: 2500, keep_alive_seconds: 30, max_refused_payments_per_minute: 6, client_ipv6_prefix: 56, mcp_max_rows: 250, mcp_max_bytes: 65536 },
      }),
      { baseDir: BASE, env: {} },
    );
    expect(config.server.trustProxy).toBe("x-forwarded-for");
    expect(config.rpcUrls[31337]).toBe("http://127.0.0.1:8545");
    expect(config.rpcUrls[8453]).toBe("https://base.example/rpc");
    expect(config.rpcUrls[84532]).toBe(DEFAULT_RPC_URLS[84532]!);
    expect(config.limits).toMatchObject({ maxConcurrentPerClient: 4, sendTimeoutMs: 30000, spillBudgetMb: 0, receiveTimeoutMs: 2500, keepAliveSeconds: 30, maxRefusedPaymentsPerMinute: 6, clientIpv6Prefix: 56, mcpMaxRows: 250, mcpMaxBytes: 65536 });
  });
});
