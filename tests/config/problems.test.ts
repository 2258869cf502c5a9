import { describe, expect, test } from "bun:test";
import { DEVNET_TOKEN, PAY_TO, minimal, perRow } from "./examples.ts";
import { expectProblem, problemsOf } from "./support.ts";

const table = (tags: unknown[], extra: Record<string, unknown> = {}) => minimal({ tables: [{ name: "items", price_tags: tags, ...extra }] });
const devnet = (entry: Record<string, unknown>) => ({ chain: "31337", address: DEVNET_TOKEN, name: "USD Coin", version: "2", decimals: 6, ...entry });

// Each case: a config with exactly one problem, its path, and a phrase the message must contain.
const CASES: [string, unknown, string, string][] = [
  // Shape
  ["not a mapping", ["a"], "(top level)", "must be a mapping"],
  ["empty config", null, "(top level)", "must be a mapping"],
  ["database missing", { tables: [{ name: "items" }] }, "database", "is required"],
  ["database.sqlite missing", minimal({ database: {} }), "database.sqlite", "is required"],
  ["database.sqlite empty value", minimal({ database: { sqlite: null } }), "database.sqlite", "is required"],
  ["tables missing", { database: { sqlite: "x" } }, "tables", "is required"],
  ["no tables", minimal({ tables: [] }), "tables", "at least 1 entry"],
  ["tables not a list", minimal({ tables: { name: "x" } }), "tables", "write a list"],
  ["table without name", minimal({ tables: [{ description: "x" }] }), "tables[0].name", "is required"],
  ["table name empty", minimal({ tables: [{ name: "" }] }), "tables[0].name", "must not be empty"],
  ["limits not whole", minimal({ limits: { max_rows: 1.5 } }), "limits.max_rows", "write a whole number"],
  ["limits below 1", minimal({ limits: { query_timeout_ms: 0 } }), "limits.query_timeout_ms", "at least 1"],
  ["per-client limit negative", minimal({ limits: { max_concurrent_per_client: -1 } }), "limits.max_concurrent_per_client", "at least 0"],
  ["send timeout zero", minimal({ limits: { send_timeout_ms: 0 } }), "limits.send_timeout_ms", "at least 1"],
  ["spill budget negative", minimal({ limits: { spill_budget_mb: -1 } }), "limits.spill_budget_mb", "at least 0"],
  ["receive timeout zero", minimal({ limits: { receive_timeout_ms: 0 } }), "limits.receive_timeout_ms", "at least 1"],
  ["keep-alive over Bun's bound", minimal({ limits: { keep_alive_seconds: 256 } }), "limits.keep_alive_seconds", "must be at most 255, got 256"],
  ["IPv6 client prefix over 128 bits", minimal({ limits: { client_ipv6_prefix: 129 } }), "limits.client_ipv6_prefix", "must be at most 128, got 129"],
  ["IPv6 client prefix zero", minimal({ limits: { client_ipv6_prefix: 0 } }), "limits.client_ipv6_prefix", "at least 1"],
  ["MCP byte cap zero", minimal({ limits: { mcp_max_bytes: 0 } }), "limits.mcp_max_bytes", "at least 1"],
  ["MCP row cap zero", minimal({ limits: { mcp_max_rows: 0 } }), "limits.mcp_max_rows", "at least 1"],
  ["MCP row cap not whole", minimal({ limits: { mcp_max_rows: "many" } }), "limits.mcp_max_rows", "write a whole number"],
  ["trust_proxy not a header name", minimal({ server: { trust_proxy: "X Forwarded For" } }), "server.trust_proxy", "not an HTTP header name"],
  ["rpc_urls keyed by name", minimal({ rpc_urls: { base: "https://mainnet.base.org" } }), "rpc_urls.base", "not an EVM chain id"],
  ["rpc_urls not a URL", minimal({ rpc_urls: { "8453": "mainnet.base.org" } }), "rpc_urls.8453", "not an http(s) URL"],
  ["timeout as text", minimal({ facilitator: { timeout_ms: "10s" } }), "facilitator.timeout_ms", 'got the text "10s"'],
  ["boolean as text", table([perRow({ is_default: "yes" })]), "tables[0].price_tags[0].is_default", "write true or false"],
  ["column description not text", minimal({ tables: [{ name: "items", columns: { a: 5 } }] }), "tables[0].columns.a", "got the number 5"],
  ["column described twice", minimal({ tables: [{ name: "items", columns: { a: "x", A: "y" } }] }), "tables[0].columns.A", "same column as a"],
  // Unknown keys, at several depths
  ["unknown top-level key", minimal({ table: [] }), "table", "did you mean tables?"],
  ["unknown server key", minimal({ server: { port: 1 } }), "server.port", "allowed here: bind, base_url, cors_origins, trust_proxy"],
  ["unknown table key", minimal({ tables: [{ name: "items", price: 1 }] }), "tables[0].price", "unknown key"],
  ["unknown tag key", table([perRow({ amount: "1" })]), "tables[0].price_tags[0].amount", "did you mean amount_per_item?"],
  ["is_default on metadata_price", table([{ type: "metadata_price", pay_to: PAY_TO, token: "usdc/base", amount: "0.01", is_default: true }]), "tables[0].price_tags[0].is_default", "unknown key"],
  ["unknown token key", minimal({ tokens: { "usdc/devnet": devnet({ decimal: 6 }) } }), "tokens.usdc/devnet.decimal", "did you mean decimals?"],
  ["unknown dashboard entry key", minimal({ dashboards: { entries: [{ slug: "a", title: "A", table: "items", hidden: true }] } }), "dashboards.entries[0].hidden", "unknown key"],
  ["flow-mapping comma makes a key", table([Bun.YAML.parse(`{ type: fixed, pay_to: "${PAY_TO}", token: usdc/base, amount: "1", description: Any query, flat }`)]), "tables[0].price_tags[0].flat", "unknown key"],
  // Price tag types
  ["unknown tag type", table([perRow({ type: "per_rows" })]), "tables[0].price_tags[0].type", "must be one of per_row, fixed, metadata_price"],
  ["missing tag type", table([{ pay_to: PAY_TO, token: "usdc/base", amount: "1" }]), "tables[0].price_tags[0].type", "is required; write one of per_row, fixed, metadata_price"],
  ["tag not a mapping", table(["per_row"]), "tables[0].price_tags[0]", "write a mapping with a type"],
  ["per_row quote not count or limit", table([perRow({ quote: "rows" })]), "tables[0].price_tags[0].quote", "write count or limit"],
  ["quote on a fixed tag", table([{ type: "fixed", pay_to: PAY_TO, token: "usdc/base", amount: "1", quote: "limit" }]), "tables[0].price_tags[0].quote", "unknown key"],
  ["fixed without amount", table([{ type: "fixed", pay_to: PAY_TO, token: "usdc/base" }]), "tables[0].price_tags[0].amount", "is required"],
  // Amounts
  ["amount as a YAML number", table([perRow({ amount_per_item: 0.002 })]), "tables[0].price_tags[0].amount_per_item", 'write the amount as a quoted decimal string, e.g. "0.002"'],
  ["too many decimals", table([perRow({ amount_per_item: "0.0000001" })]), "tables[0].price_tags[0].amount_per_item", "7 decimal places but the token has 6"],
  ["negative amount", table([{ type: "fixed", pay_to: PAY_TO, token: "usdc/base", amount: "-1" }]), "tables[0].price_tags[0].amount", "must not be negative"],
  ["exponent", table([perRow({ min_total_amount: "1e3" })]), "tables[0].price_tags[0].min_total_amount", "exponent notation"],
  ["zero price", table([perRow({ amount_per_item: "0" })]), "tables[0].price_tags[0].amount_per_item", "must be more than 0"],
  ["decimals of a custom token", minimal({ tokens: { "eur/x": devnet({ decimals: 2 }) }, tables: [{ name: "items", price_tags: [perRow({ token: "eur/x", amount_per_item: "0.001" })] }] }), "tables[0].price_tags[0].amount_per_item", "the token has 2 decimals"],
  // Items
  ["min_items above max_items", table([perRow({ min_items: 10, max_items: 5 })]), "tables[0].price_tags[0].min_items", "more than max_items 5"],
  ["negative min_items", table([perRow({ min_items: -1 })]), "tables[0].price_tags[0].min_items", "at least 0"],
  // Addresses and tokens
  ["pay_to too short", table([perRow({ pay_to: "0x1234" })]), "tables[0].price_tags[0].pay_to", "40 hex digits"],
  ["pay_to bad checksum", table([perRow({ pay_to: PAY_TO.replace("Bc", "bc") })]), "tables[0].price_tags[0].pay_to", "checksum"],
  ["pay_to zero address", table([perRow({ pay_to: `0x${"0".repeat(40)}` })]), "tables[0].price_tags[0].pay_to", "zero address"],
  ["pay_to unquoted in YAML", table([perRow({ pay_to: 1.8e47 })]), "tables[0].price_tags[0].pay_to", "write the address in quotes"],
  ["unknown token", table([perRow({ token: "usdc/base-sepolia" })]), "tables[0].price_tags[0].token", "unknown token"],
  ["custom token shadows a built-in", minimal({ tokens: { "USDC/Base": devnet({}) } }), "tokens.USDC/Base", "usdc/base is a built-in token"],
  ["custom token bad address", minimal({ tokens: { "usdc/devnet": devnet({ address: "0xnothex" }) } }), "tokens.usdc/devnet.address", "not an address"],
  ["custom token chain zero", minimal({ tokens: { "usdc/devnet": devnet({ chain: "0" }) } }), "tokens.usdc/devnet.chain", "positive whole number"],
  ["custom token version as number", minimal({ tokens: { "usdc/devnet": devnet({ version: 2 }) } }), "tokens.usdc/devnet.version", 'in quotes, e.g. "2"'],
  ["custom token key with spaces", minimal({ tokens: { "usdc devnet": devnet({}) } }), 'tokens["usdc devnet"]', "token keys use"],
  // Uniqueness and defaults
  ["duplicate table, other case", minimal({ tables: [{ name: "items" }, { name: "Items" }] }), "tables[1].name", "already configured at tables[0]"],
  ["two defaults", table([perRow({ is_default: true }), perRow({ is_default: true })]), "tables[0].price_tags[1].is_default", "tables[0].price_tags[0] already is"],
  // Server and facilitator
  ["bind without port", minimal({ server: { bind: "127.0.0.1" } }), "server.bind", "is not host:port"],
  ["bind port too large", minimal({ server: { bind: "127.0.0.1:70000" } }), "server.bind", "is not host:port"],
  ["base_url not http", minimal({ server: { base_url: "ftp://x" } }), "server.base_url", "not an http(s) URL"],
  ["base_url with query", minimal({ server: { base_url: "https://x.example/?a=1" } }), "server.base_url", "without query"],
  ["cors origin with path", minimal({ server: { cors_origins: ["https://a.example/app"] } }), "server.cors_origins[0]", "is not an origin"],
  ["facilitator url junk", minimal({ facilitator: { url: "x402.org" } }), "facilitator.url", "not an http(s) URL"],
  ["header name invalid", minimal({ facilitator: { headers: { "X Token": "a" } } }), 'facilitator.headers["X Token"]', "not a valid HTTP header name"],
  ["header value multi-line", minimal({ facilitator: { headers: { "X-Token": "a\nb" } } }), "facilitator.headers.X-Token", "single line"],
  ["ledger is the database", minimal({ ledger: { path: "./db.sqlite" } }), "ledger.path", "is the published database"],
  // Dashboards
  ["slug pattern", minimal({ dashboards: { entries: [{ slug: "Dex", title: "D", table: "items" }] } }), "dashboards.entries[0].slug", "lowercase letters"],
  ["slug api reserved", minimal({ dashboards: { entries: [{ slug: "api", title: "D", table: "items" }] } }), "dashboards.entries[0].slug", "reserved"],
  ["duplicate slug", minimal({ dashboards: { entries: [{ slug: "d", title: "D", table: "items" }, { slug: "d", title: "E", table: "items" }] } }), "dashboards.entries[1].slug", "already used by dashboards.entries[0]"],
  [
    "dashboard of a table that sells its schema",
    minimal({ tables: [{ name: "items", price_tags: [{ type: "metadata_price", pay_to: PAY_TO, token: "usdc/base", amount: "0.01" }] }], dashboards: { entries: [{ slug: "d", title: "D", table: "items" }] } }),
    "dashboards.entries[0].table",
    "sells its schema (a metadata_price price tag), which a dashboard would publish for free",
  ],
  ["dashboard table not configured", minimal({ dashboards: { entries: [{ slug: "d", title: "D", table: "swaps" }] } }), "dashboards.entries[0].table", "not a configured table; use one of items"],
  ["dashboard title missing", minimal({ dashboards: { entries: [{ slug: "d", table: "items" }] } }), "dashboards.entries[0].title", "is required"],
];

describe("each kind of problem is reported at its path", () => {
  for (const [name, raw, path, fragment] of CASES) {
    test(name, () => {
      const problems = problemsOf(raw);
      expectProblem(problems, path, fragment);
      expect(problems).toHaveLength(1);
    });
  }
});

describe("every problem at once", () => {
  test("schema and semantic problems across sections are all reported", () => {
    const problems = problemsOf(
      {
        server: { bind: "nowhere", extra: 1 },
        database: {},
        limits: { max_rows: -5 },
        tokens: { "usdc/devnet": devnet({ address: "0x12" }) },
        tables: [
          {
            name: "items",
            price_tags: [
              perRow({ amount_per_item: 0.5, pay_to: "0xabc" }),
              perRow({ token: "nope", is_default: true }),
              { type: "fixed", pay_to: PAY_TO, token: "usdc/base", amount: "1.0000001", is_default: true },
            ],
          },
          { name: "ITEMS" },
        ],
        dashboards: { entries: [{ slug: "api", title: "", table: "other" }] },
      },
      {},
    );
    const expected: [string, string][] = [
      ["server.extra", "unknown key"],
      ["server.bind", "not host:port"],
      ["database.sqlite", "is required"],
      ["limits.max_rows", "at least 1"],
      ["tokens.usdc/devnet.address", "not an address"],
      ["tables[0].price_tags[0].amount_per_item", "quoted decimal string"],
      ["tables[0].price_tags[0].pay_to", "not an address"],
      ["tables[0].price_tags[1].token", "unknown token"],
      ["tables[0].price_tags[2].amount", "7 decimal places"],
      ["tables[0].price_tags[2].is_default", "only one price tag"],
      ["tables[1].name", "already configured"],
      ["dashboards.entries[0].slug", "reserved"],
      ["dashboards.entries[0].title", "must not be empty"],
      ["dashboards.entries[0].table", "not a configured table"],
    ];
    for (const [path, fragment] of expected) expectProblem(problems, path, fragment);
    expect(problems).toHaveLength(expected.length);
  });

  test("more problems than TypeBox buffers by default are all reported", () => {
    const tables = Array.from({ length: 30 }, (_, index) => ({ name: `t${index}`, bogus: index }));
    const problems = problemsOf(minimal({ tables }));
    expect(problems).toHaveLength(30);
    for (let index = 0; index < 30; index++) expectProblem(problems, `tables[${index}].bogus`, "unknown key");
  });

  test("a price tag naming a broken custom token is not reported twice", () => {
    const problems = problemsOf(
      minimal({ tokens: { "usdc/devnet": devnet({ address: 5 }) }, tables: [{ name: "items", price_tags: [perRow({ token: "usdc/devnet" })] }] }),
    );
    expect(problems).toEqual([expect.stringMatching(/^tokens\.usdc\/devnet\.address: /)]);
  });
});

test("the TypeBox error buffer limit is restored for other users of TypeBox", async () => {
  const { Settings } = await import("typebox/system");
  const before = Settings.Get().maxErrors;
  problemsOf(minimal({ bogus: 1 }));
  expect(Settings.Get().maxErrors).toBe(before);
});
