/**
 * Loads the configuration (ARCHITECTURE.md §2): YAML → `${VAR}` expansion → shape (TypeBox) → meaning
 * (tokens, amounts, addresses, duplicates) → the resolved `Config`. Every problem is collected and
 * thrown at once as a ConfigError, each line prefixed with its path in the YAML. Relative paths
 * resolve against the config file's directory, so a config works from any working directory.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError } from "../errors.ts";
import { resolveTokens } from "./custom-tokens.ts";
import { resolveDashboards } from "./dashboards.ts";
import { dropEmptyValues } from "./empty-values.ts";
import { expandEnv, type Env } from "./env.ts";
import { resolveLedger } from "./ledger.ts";
import { describeKind, isRecord, Problems } from "./problems.ts";
import { ConfigSchema, DEFAULTS } from "./schema.ts";
import { collectSchemaProblems } from "./schema-problems.ts";
import { resolveFacilitator } from "./facilitator.ts";
import { resolveRpcUrls } from "./rpc.ts";
import { resolveServer, sectionOf } from "./server.ts";
import { assignSources, resolveSources, sqlitePaths } from "./sources.ts";
import { resolveTables } from "./tables.ts";
import type { Config } from "./types.ts";
import { parseYaml } from "./yaml.ts";

/** Reads and resolves a YAML config file; throws ConfigError listing every problem. */
export function loadConfigFile(path: string, env?: Record<string, string | undefined>): Config {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError([`${path}: cannot read the config file (${code}); check the --config path`]);
  }
  const parsed = parseYaml(text);
  if (!parsed.ok) throw new ConfigError([`${path}${parsed.line === undefined ? "" : `:${parsed.line}`}: ${parsed.message}`]);
  return resolveConfig(parsed.value, { baseDir: dirname(resolve(path)), ...(env === undefined ? {} : { env }) });
}

function numberOr(section: Record<string, unknown> | undefined, key: string, fallback: number): number {
  const value = section?.[key];
  return typeof value === "number" ? value : fallback;
}

function stringOr(section: Record<string, unknown> | undefined, key: string, fallback: string): string {
  const value = section?.[key];
  return typeof value === "string" ? value : fallback;
}

/** Validates and resolves an already-parsed config object (the demo builds its config this way). */
export function resolveConfig(raw: unknown, opts: { baseDir: string; env?: Env }): Config {
  const problems = new Problems();
  const config = isRecord(raw) ? dropEmptyValues(ConfigSchema, expandEnv(raw, opts.env ?? process.env, [], problems)) : raw;
  if (!isRecord(config)) {
    problems.add([], `got ${describeKind(raw)}; the config must be a mapping with at least database: (sqlite:) and tables:`);
    throw new ConfigError(problems.list);
  }
  const baseDir = resolve(opts.baseDir);
  collectSchemaProblems(ConfigSchema, config, [], problems);

  const server = resolveServer(config.server, problems);
  const facilitator = resolveFacilitator(config.facilitator, problems);
  const tokens = resolveTokens(config.tokens, problems);
  const rpcUrls = resolveRpcUrls(config.rpc_urls, problems);
  const tables = resolveTables(config.tables, tokens, problems);
  const tableNames = tables.map((table) => table.name).filter((name) => name !== "");
  const schemaSold = tables.filter((table) => table.priceTags.some((tag) => tag.type === "metadata_price")).map((table) => table.name);
  const dashboards = config.dashboards === undefined ? undefined : resolveDashboards(config.dashboards, tableNames, baseDir, problems, schemaSold);

  const databases = resolveSources(config.database, config.databases, baseDir, problems);
  assignSources(tables, config.tables, databases, baseDir, problems);
  const payment = sectionOf(config.payment);
  const ledger = sectionOf(config.ledger);
  const limits = sectionOf(config.limits);
  const ledgerConfig = resolveLedger(ledger, baseDir, sqlitePaths(databases), problems);

  if (!problems.isEmpty || server === undefined || facilitator === undefined || ledgerConfig === undefined) {
    throw new ConfigError(problems.isEmpty ? ["(top level): the configuration could not be resolved"] : problems.list);
  }
  return {
    server,
    facilitator,
    databases,
    payment: {
      maxTimeoutSeconds: numberOr(payment, "max_timeout_seconds", DEFAULTS.maxTimeoutSeconds),
      defaultDescription: stringOr(payment, "default_description", DEFAULTS.defaultDescription),
    },
    ledger: ledgerConfig,
    limits: {
      maxRows: numberOr(limits, "max_rows", DEFAULTS.maxRows),
      queryTimeoutMs: numberOr(limits, "query_timeout_ms", DEFAULTS.queryTimeoutMs),
      maxQueryBytes: numberOr(limits, "max_query_bytes", DEFAULTS.maxQueryBytes),
      maxConcurrentPerClient: numberOr(limits, "max_concurrent_per_client", DEFAULTS.maxConcurrentPerClient),
      sendTimeoutMs: numberOr(limits, "send_timeout_ms", DEFAULTS.sendTimeoutMs),
      spillBudgetMb: numberOr(limits, "spill_budget_mb", DEFAULTS.spillBudgetMb),
      unsentBudgetMb: numberOr(limits, "unsent_budget_mb", DEFAULTS.unsentBudgetMb),
      receiveTimeoutMs: numberOr(limits, "receive_timeout_ms", DEFAULTS.receiveTimeoutMs),
      keepAliveSeconds: numberOr(limits, "keep_alive_seconds", DEFAULTS.keepAliveSeconds),
      maxRefusedPaymentsPerMinute: numberOr(limits, "max_refused_payments_per_minute", DEFAULTS.maxRefusedPaymentsPerMinute),
      clientIpv6Prefix: numberOr(limits, "client_ipv6_prefix", DEFAULTS.clientIpv6Prefix),
      mcpMaxRows: numberOr(limits, "mcp_max_rows", DEFAULTS.mcpMaxRows),
      mcpMaxBytes: numberOr(limits, "mcp_max_bytes", DEFAULTS.mcpMaxBytes),
      maxReplays: numberOr(limits, "max_replays", DEFAULTS.maxReplays),
    },
    rpcUrls,
    tokens: tokens.tokens,
    tables,
    ...(dashboards === undefined ? {} : { dashboards }),
  };
}
