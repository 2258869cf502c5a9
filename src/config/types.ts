/**
 * The resolved configuration: what `load.ts` produces after the YAML has been validated,
 * `${VAR}`s expanded, tokens resolved and decimal amounts converted to exact smallest units.
 * Every other module reads configuration through these types, never the raw YAML.
 */
import type { CdpCredentials } from "./cdp-key.ts";

export type Hex = `0x${string}`;
export type LogFormat = "text" | "json";

/** A source of tables (DESIGN.md §14): its engine and how to reach it. */
export type SourceConfig =
  | { engine: "sqlite"; /** Absolute path of the file, opened read-only. */ path: string }
  | {
      engine: "postgres";
      /** postgres:// URL, possibly with a password: never print it (public-url.ts). */
      url: string;
      /** Where unqualified table names are looked up. */
      schema: string;
      /** Connections per process. */
      maxConnections: number;
    }
  | {
      engine: "duckdb";
      /** Absolute path of a DuckDB database file, opened read-only, or ":memory:" (tables from files only). */
      path: string;
      /** DuckDB's memory_limit for the source, shared by its queries running at once (MiB). */
      memoryLimitMb: number;
      /** DuckDB's worker threads; null: DuckDB's default, one per core. */
      threads: number | null;
    };
export type Network = `eip155:${number}`;

export interface TokenInfo {
  /** Config key, e.g. `usdc/base_sepolia`. */
  key: string;
  chainId: number;
  network: Network;
  /** Checksummed ERC-20 contract address. */
  address: Hex;
  /** EIP-712 domain name and version, sent in `extra` of every offer. */
  name: string;
  version: string;
  decimals: number;
  /** Human label for the network, e.g. "Base Sepolia". */
  networkLabel: string;
  /** Human symbol, e.g. "USDC". */
  symbol: string;
}

interface PriceTagCommon {
  /** Checksummed recipient address. */
  payTo: Hex;
  token: TokenInfo;
  description?: string;
}

export interface PerRowPriceTag extends PriceTagCommon {
  type: "per_row";
  /** Smallest token units per row. */
  amountPerItem: bigint;
  minItems?: number;
  maxItems?: number;
  /** Smallest token units. */
  minTotalAmount?: bigint;
  /**
   * What prices a query (DESIGN.md §17): `count`, the rows it returns (counted before payment, so
   * the quote tells the count), or `limit`, its LIMIT (known without reading the data).
   */
  quote: "count" | "limit";
  isDefault: boolean;
}

export interface FixedPriceTag extends PriceTagCommon {
  type: "fixed";
  /** Smallest token units. */
  amount: bigint;
  isDefault: boolean;
}

export interface MetadataPriceTag extends PriceTagCommon {
  type: "metadata_price";
  /** Smallest token units. */
  amount: bigint;
}

export type PriceTag = PerRowPriceTag | FixedPriceTag | MetadataPriceTag;

export interface TableConfig {
  name: string;
  /** The source it is served from (a key of Config.databases). */
  database: string;
  /** Its name in that source (the table's name unless `source:` says otherwise). */
  source: string;
  /** DuckDB sources only: the table is served from these files (DESIGN.md §14), not from a table of the source. */
  files?: TableFiles;
  description: string;
  /** Optional column descriptions, by column name. */
  columns: Record<string, string>;
  priceTags: PriceTag[];
}

/** A table's `files:` (DESIGN.md §14): Parquet, CSV or NDJSON files, by their extension. */
export interface TableFiles {
  /** As configured, resolved against the config's folder (it may be a glob). */
  pattern: string;
  format: "parquet" | "csv" | "ndjson";
  /** The files the pattern matched when the config was read, sorted: the only files the table reads. */
  paths: string[];
}

export interface DashboardEntry {
  slug: string;
  title: string;
  description: string;
  tags: string[];
  /** The table the dashboard charts. */
  table: string;
  enabled: boolean;
}

/**
 * Where the payment state lives (ARCHITECTURE.md §11 "Replicas"): a local SQLite file (absolute path), or
 * a PostgreSQL database (`postgres://` URL, possibly with a password: never print it).
 */
export type LedgerConfig = { path: string; url?: undefined } | { url: string; path?: undefined };

export interface Config {
  server: {
    host: string;
    port: number;
    baseUrl: string;
    corsOrigins: string[];
    /** Lower-case name of the header a trusted proxy puts the client address in; null: the socket's address. */
    trustProxy: string | null;
    /** Serve `GET /metrics` (ARCHITECTURE.md §11 "Operations"). */
    metrics: boolean;
    /** When set, `GET /metrics` requires `Authorization: Bearer <token>`. */
    metricsToken: string | null;
    /** Request and payment lines on stdout: `text` for humans, `json` one object per line. */
    log: LogFormat;
    /** How long SIGTERM waits for requests in flight before closing them. */
    shutdownMs: number;
  };
  facilitator: {
    url: string;
    timeoutMs: number;
    headers: Record<string, string>;
    /** A Coinbase CDP API key: each request carries a fresh JWT signed with it (payment/cdp-auth.ts). */
    cdp?: CdpCredentials;
  };
  /** Named sources of tables, in config order (`database: {sqlite}` is the source `main`). */
  databases: Record<string, SourceConfig>;
  payment: {
    maxTimeoutSeconds: number;
    defaultDescription: string;
  };
  ledger: LedgerConfig;
  limits: {
    maxRows: number;
    queryTimeoutMs: number;
    maxQueryBytes: number;
    /** Queries one client address may run at once; 0 means no limit. */
    maxConcurrentPerClient: number;
    /** A response whose client reads nothing for this long is cut. */
    sendTimeoutMs: number;
    /** Temporary files of waiting responses and held paid results stay within this many MiB (results/spill.ts). */
    spillBudgetMb: number;
    /** Complete answers waiting for their clients stay within this many MiB of memory (results/sent-body.ts). */
    unsentBudgetMb: number;
    /** A request body (POST /mcp) that has not all arrived after this long is refused (408). */
    receiveTimeoutMs: number;
    /** Refused payments (chain read or /verify) per client address and minute before its payments get 429 (default 10); 0 means no limit. */
    maxRefusedPaymentsPerMinute: number;
    /** The per-client limits count an IPv6 client by its network of this many bits (routes/client-key.ts). */
    clientIpv6Prefix: number;
    /** A connection idle this long between requests is closed (ops/keep-alive.ts). */
    keepAliveSeconds: number;
    /** Most rows one MCP `query` call may return (a larger result is refused, never truncated). */
    mcpMaxRows: number;
    /** Most bytes (of the Arrow result) one MCP `query` call may return (a larger result is refused). */
    mcpMaxBytes: number;
    /** Times a settled payment is served again, with the answer it bought (payment/replays.ts). */
    maxReplays: number;
  };
  /** JSON-RPC endpoints by chain id (built-in defaults included), to confirm settlements on chain. */
  rpcUrls: Record<number, string>;
  /** Built-in plus custom tokens, by key. */
  tokens: Record<string, TokenInfo>;
  tables: TableConfig[];
  /** Absent when no dashboards are configured (then `/` is 404). */
  dashboards?: {
    /** Absolute path of the dashboards root. */
    root: string;
    entries: DashboardEntry[];
  };
}
