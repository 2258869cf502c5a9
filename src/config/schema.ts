/**
 * The YAML configuration's shape (ARCHITECTURE.md §2), as TypeBox schemas. Every object is closed
 * (`additionalProperties: false`): an unknown key is an error, never silently ignored. Options
 * starting with `x-` feed the problem messages: `x-hint` says what to write instead when a value
 * has the wrong type or form. Meaning (token keys, amounts, addresses, uniqueness) is checked
 * after the shape, in the resolvers.
 *
 * Price tags are a union discriminated by `type`; each variant is validated on its own after
 * dispatching on `type` (see price-tags.ts), so a mistake is reported against the variant the user
 * meant instead of as "matches none of three schemas".
 */
import Type, { type TSchema } from "typebox";

export const DEFAULTS = {
  bind: "127.0.0.1:4021",
  corsOrigins: ["*"],
  facilitatorUrl: "https://x402.org/facilitator",
  /** Coinbase's CDP facilitator: the default URL when `facilitator.cdp` is set. */
  cdpFacilitatorUrl: "https://api.cdp.coinbase.com/platform/v2/x402",
  facilitatorTimeoutMs: 10_000,
  maxTimeoutSeconds: 300,
  defaultDescription: "Query execution payment",
  ledgerPath: "./arrow402-ledger.sqlite",
  maxRows: 1_000_000,
  queryTimeoutMs: 10_000,
  maxQueryBytes: 16_384,
  maxConcurrentPerClient: 0,
  sendTimeoutMs: 60_000,
  spillBudgetMb: 4_096,
  receiveTimeoutMs: 10_000,
  keepAliveSeconds: 75,
  maxRefusedPaymentsPerMinute: 10,
  clientIpv6Prefix: 64,
  mcpMaxRows: 1_000,
  mcpMaxBytes: 1_048_576,
  maxReplays: 3,
  unsentBudgetMb: 256,
  dashboardsRoot: "./dashboards",
  metrics: false,
  log: "text",
  shutdownMs: 10_000,
} as const;

/** `server.log` values: lines for humans, or one JSON object per line for log collectors. */
export const LOG_FORMATS = ["text", "json"] as const;

const closed = { additionalProperties: false } as const;

const Text = (description: string) => Type.String({ description });
const NonEmpty = (description: string) => Type.String({ minLength: 1, description });
const Count = (description: string, minimum: number, extra: object = {}) =>
  Type.Integer({ minimum, description, "x-hint": `write a whole number${minimum > 0 ? ` of at least ${minimum}` : ""}`, ...extra });

/** Decimal token units, always quoted: an unquoted YAML number has already been rounded through floating point. */
const Amount = (description: string) =>
  Type.String({ description, "x-hint": 'write the amount as a quoted decimal string, e.g. "0.002"' });

/** YAML reads an unquoted `0x…` as a hexadecimal number, so addresses must be quoted. */
const Address = (description: string) =>
  Type.String({ description, "x-hint": 'write the address in quotes, e.g. "0x036CbD53842c5426634e7929541eC2318f3dCF7e"' });

const PayTo = Address("the 0x address that receives the payments");
const TokenKey = NonEmpty("a token key such as usdc/base_sepolia (built-in) or one defined under tokens:");
const TagDescription = Text("text shown to the payer with this offer");
const IsDefault = Type.Boolean({ description: "whether this is the table's default offer", "x-hint": "write true or false" });

export const PerRowPriceTagSchema = Type.Object(
  {
    type: Type.Literal("per_row"),
    pay_to: PayTo,
    token: TokenKey,
    amount_per_item: Amount("price of one returned row in token units"),
    min_items: Type.Optional(Count("rows charged at least, however few are returned", 0)),
    max_items: Type.Optional(Count("most rows a query may return under this offer", 0)),
    min_total_amount: Type.Optional(Amount("least total charged per query in token units")),
    quote: Type.Optional(
      Type.Union([Type.Literal("count"), Type.Literal("limit")], {
        description: "what prices a query: the rows it returns (count, the default) or its LIMIT (limit: the data tells nothing before payment)",
        "x-hint": "write count or limit",
      }),
    ),
    is_default: Type.Optional(IsDefault),
    description: Type.Optional(TagDescription),
  },
  closed,
);

export const FixedPriceTagSchema = Type.Object(
  {
    type: Type.Literal("fixed"),
    pay_to: PayTo,
    token: TokenKey,
    amount: Amount("price of any query in token units"),
    is_default: Type.Optional(IsDefault),
    description: Type.Optional(TagDescription),
  },
  closed,
);

export const MetadataPriceTagSchema = Type.Object(
  {
    type: Type.Literal("metadata_price"),
    pay_to: PayTo,
    token: TokenKey,
    amount: Amount("price of the table's metadata in token units"),
    description: Type.Optional(TagDescription),
  },
  closed,
);

/** The variants by their `type` value; plain data, also the list shown in messages. */
export const PRICE_TAG_SCHEMAS: Record<string, TSchema> = {
  per_row: PerRowPriceTagSchema,
  fixed: FixedPriceTagSchema,
  metadata_price: MetadataPriceTagSchema,
};

export const PriceTagSchema = Type.Union([PerRowPriceTagSchema, FixedPriceTagSchema, MetadataPriceTagSchema]);

export const TableSchema = Type.Object(
  {
    name: NonEmpty("the table's (or view's) name in the database"),
    database: Type.Optional(NonEmpty("the source the table is served from (a key of databases:)")),
    source: Type.Optional(NonEmpty("the table's name in its source, when it differs (PostgreSQL: table or schema.table)")),
    files: Type.Optional(NonEmpty("DuckDB sources: the Parquet, CSV or NDJSON files the table is served from (a path or a glob)")),
    description: Type.Optional(Text("what the table holds")),
    columns: Type.Optional(Type.Record(Type.String(), Text("column description"), { description: "descriptions by column name" })),
    // Each entry is checked against PRICE_TAG_SCHEMAS[entry.type] (see price-tags.ts).
    price_tags: Type.Optional(Type.Array(Type.Unknown(), { description: "the table's offers; none means free" })),
  },
  closed,
);

export const CustomTokenSchema = Type.Object(
  {
    chain: Type.Union([Type.String({ pattern: "^[1-9][0-9]*$" }), Type.Integer({ minimum: 1 })], {
      description: "EVM chain id",
      "x-hint": 'write the EVM chain id as a positive whole number, e.g. "31337"',
    }),
    address: Address("the token contract's 0x address"),
    name: NonEmpty("the token's EIP-712 domain name, exactly as the contract has it"),
    version: Type.String({
      minLength: 1,
      description: "the token's EIP-712 domain version, exactly as the contract has it",
      "x-hint": 'write the EIP-712 version in quotes, e.g. "2"',
    }),
    decimals: Count("the token's ERC-20 decimals", 0, { maximum: 255 }),
    symbol: Type.Optional(NonEmpty("symbol shown to humans")),
    network_label: Type.Optional(NonEmpty("network name shown to humans")),
  },
  closed,
);

export const DashboardEntrySchema = Type.Object(
  {
    slug: Type.String({
      pattern: "^[a-z0-9][a-z0-9_-]*$",
      description: "the dashboard's URL path segment",
      "x-hint": "write lowercase letters, digits, '-' and '_', starting with a letter or digit, e.g. dex-activity",
    }),
    title: NonEmpty("the dashboard's title"),
    description: Type.Optional(Text("one line shown on the landing page")),
    tags: Type.Optional(Type.Array(Type.String(), { description: "labels shown on the landing page" })),
    table: NonEmpty("the configured table the dashboard charts"),
    enabled: Type.Optional(Type.Boolean({ "x-hint": "write true or false" })),
  },
  closed,
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Optional(
      Type.Object(
        {
          bind: Type.Optional(Type.String({ default: DEFAULTS.bind, description: "host:port to listen on" })),
          base_url: Type.Optional(Type.String({ description: "public URL of the server, used in offers" })),
          cors_origins: Type.Optional(Type.Array(Type.String(), { default: DEFAULTS.corsOrigins })),
          trust_proxy: Type.Optional(
            Type.String({ description: "request header holding the client address set by a trusted proxy, e.g. X-Forwarded-For" }),
          ),
          metrics: Type.Optional(Type.Boolean({ default: DEFAULTS.metrics, description: "serve GET /metrics (Prometheus text)", "x-hint": "write true or false" })),
          metrics_token: Type.Optional(NonEmpty("bearer token GET /metrics requires; write ${METRICS_TOKEN}")),
          log: Type.Optional(
            Type.Union(
              LOG_FORMATS.map((format) => Type.Literal(format)),
              { default: DEFAULTS.log, description: "request and payment log lines on stdout", "x-hint": "write text (for humans) or json (one object per line)" },
            ),
          ),
          shutdown_ms: Type.Optional(Count("longest SIGTERM waits for requests in flight", 0, { default: DEFAULTS.shutdownMs })),
        },
        closed,
      ),
    ),
    facilitator: Type.Optional(
      Type.Object(
        {
          url: Type.Optional(Type.String({ default: DEFAULTS.facilitatorUrl })),
          timeout_ms: Type.Optional(Count("facilitator request timeout", 1, { default: DEFAULTS.facilitatorTimeoutMs })),
          headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "extra HTTP headers" })),
          cdp: Type.Optional(
            Type.Object(
              {
                api_key_id: NonEmpty("the CDP API key's id (its name, e.g. organizations/…/apiKeys/…, or its id)"),
                api_key_secret: NonEmpty("the CDP API key's secret: ECDSA PEM or Ed25519 base64; write ${CDP_API_KEY_SECRET}"),
              },
              { ...closed, description: "a Coinbase CDP API key: every facilitator request is signed with a fresh JWT" },
            ),
          ),
        },
        closed,
      ),
    ),
    database: Type.Optional(
      Type.Object({ sqlite: NonEmpty("path of the SQLite database file to publish") }, { ...closed, description: "the database to publish (one SQLite file, the source named main)" }),
    ),
    // Each entry is checked in sources.ts (one of sqlite:, postgres:).
    databases: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "named sources of tables" })),
    payment: Type.Optional(
      Type.Object(
        {
          max_timeout_seconds: Type.Optional(Count("maxTimeoutSeconds of every offer", 1, { default: DEFAULTS.maxTimeoutSeconds })),
          default_description: Type.Optional(Type.String({ default: DEFAULTS.defaultDescription })),
        },
        closed,
      ),
    ),
    ledger: Type.Optional(
      Type.Object(
        {
          path: Type.Optional(NonEmpty("path of the payment ledger file (SQLite)")),
          url: Type.Optional(NonEmpty("postgres:// URL of the payment ledger shared by replicas")),
        },
        closed,
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          max_rows: Type.Optional(Count("largest result returned", 1, { default: DEFAULTS.maxRows })),
          query_timeout_ms: Type.Optional(Count("longest query run", 1, { default: DEFAULTS.queryTimeoutMs })),
          max_query_bytes: Type.Optional(Count("longest SQL text accepted", 1, { default: DEFAULTS.maxQueryBytes })),
          max_concurrent_per_client: Type.Optional(
            Count("queries one client address may run at once (0: no limit)", 0, { default: DEFAULTS.maxConcurrentPerClient }),
          ),
          max_refused_payments_per_minute: Type.Optional(
            Count("payments that may be refused (by the chain's balance or the facilitator) per client address and minute (0: no limit)", 0, { default: DEFAULTS.maxRefusedPaymentsPerMinute }),
          ),
          client_ipv6_prefix: Type.Optional(
            Count("bits of an IPv6 address that name one client for the per-client limits", 1, { maximum: 128, default: DEFAULTS.clientIpv6Prefix }),
          ),
          send_timeout_ms: Type.Optional(Count("longest a response waits for its client to read", 1, { default: DEFAULTS.sendTimeoutMs })),
          spill_budget_mb: Type.Optional(
            Count("megabytes of temporary files for responses waiting for their clients and paid results waiting for settlement (0: none)", 0, { default: DEFAULTS.spillBudgetMb }),
          ),
          unsent_budget_mb: Type.Optional(
            Count("megabytes of complete answers held in memory for clients that have not read them yet (past it, free queries get 503)", 1, { default: DEFAULTS.unsentBudgetMb }),
          ),
          receive_timeout_ms: Type.Optional(Count("longest a request body (POST /mcp) may take to arrive", 1, { default: DEFAULTS.receiveTimeoutMs })),
          keep_alive_seconds: Type.Optional(
            Count("longest a connection may sit idle between requests", 1, { maximum: 255, default: DEFAULTS.keepAliveSeconds }),
          ),
          mcp_max_rows: Type.Optional(Count("most rows one MCP query call may return", 1, { default: DEFAULTS.mcpMaxRows })),
          mcp_max_bytes: Type.Optional(Count("most bytes of Arrow one MCP query call may return", 1, { default: DEFAULTS.mcpMaxBytes })),
          max_replays: Type.Optional(Count("times a settled payment is served again to a client that lost its answer (0: never)", 0, { default: DEFAULTS.maxReplays })),
        },
        closed,
      ),
    ),
    rpc_urls: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "JSON-RPC endpoints by chain id" })),
    tokens: Type.Optional(Type.Record(Type.String(), CustomTokenSchema, { description: "custom tokens by key" })),
    tables: Type.Array(TableSchema, { minItems: 1, description: "the tables to publish, at least one" }),
    dashboards: Type.Optional(
      Type.Object(
        {
          root: Type.Optional(NonEmpty("folder holding the dashboards")),
          entries: Type.Optional(Type.Array(DashboardEntrySchema)),
        },
        closed,
      ),
    ),
  },
  closed,
);
