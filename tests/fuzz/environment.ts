/**
 * What the fuzzer runs against: the devnet sandbox (anvil, the EIP-3009 test token, a real x402
 * facilitator behind the failure proxy) and real arrow402 servers over the fixture database:
 * - `main`: generous limits and dashboards (with a file outside their folder, and a symlink to it);
 * - `tight`: a tiny query time limit, row limit, MCP row cap and per-client limit, and dashboards
 *   configured but not generated, so the limit, 429 and 503 paths are hit;
 * - `process` (optional): `bun src/main.ts serve` as a subprocess, so a crash shows as a dead process;
 * - `sealed` (optional): tables whose quotes tell nothing about the data (DESIGN.md §17), over the
 *   fixture of sealed-tables.ts: values that fail, a table slow enough for the time limit, and one
 *   the fuzzer writes to between presentations of a payment.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";
import { raiseRequestHeadLimit, requestHeadLimit } from "../../src/routes/header-budget.ts";
import { startServer } from "../../src/server.ts";
import { defaultTables, QUERY_DESCRIPTION, startPaidSandbox, TOKEN_KEY, TOKEN_SYMBOL, type PaidSandbox } from "../support/paid-server.ts";
import { freePort, spawnServe, type ServerProcess } from "../support/serve-process.ts";
import { SECRET_MARKER, type ServerUnderTest } from "./oracle.ts";
import { createSealedTables, SEALED_LIMITS, sealedTables } from "./sealed-tables.ts";
import { TableReads } from "./table-reads.ts";
import type { FuzzCatalog } from "./sql-gen.ts";

export interface FuzzServer extends ServerUnderTest {
  url: string;
  config: Config;
  ledgerPath: string;
  /** Dashboard slugs it routes. */
  slugs: string[];
  /** Whether it still runs (always true in-process; a subprocess may have died). */
  alive(): boolean;
  /** What a subprocess printed (empty in-process). */
  output(): string;
  stop(): Promise<void>;
}

export interface FuzzEnvironment {
  sandbox: PaidSandbox;
  catalog: FuzzCatalog;
  reads: TableReads;
  main: FuzzServer;
  tight: FuzzServer;
  process: FuzzServer | null;
  sealed: FuzzServer | null;
  /** Every server started, for the checks that look at all of them. */
  servers(): FuzzServer[];
  stop(): Promise<void>;
}

export interface Limits {
  query_timeout_ms: number;
  max_rows?: number;
  mcp_max_rows?: number;
  max_concurrent_per_client?: number;
  max_refused_payments_per_minute?: number;
  mcp_max_bytes?: number;
}

// Every fuzz request comes from one address and many of its payments are refused on purpose: the
// per-client budget of refusals (on by default, tested in tests/e2e) would turn the rest away.
const MAIN_LIMITS: Limits = { query_timeout_ms: 3_000, max_refused_payments_per_minute: 0 };
const TIGHT_LIMITS: Limits = { query_timeout_ms: 25, max_rows: 3, mcp_max_rows: 2, max_concurrent_per_client: 2, max_refused_payments_per_minute: 0 };
const FACILITATOR_TIMEOUT_MS = 2_000;
/**
 * The sealed server's: no facilitator failure is staged for it, and its cases pay (and fail after
 * /verify) often; a loaded machine must not turn a slow /verify or /settle into a 500.
 */
const SEALED_FACILITATOR_TIMEOUT_MS = 10_000;
/** Beyond what the limits allow a request (validation queue, worker queue, query, /verify, /settle), for a busy machine. */
const MARGIN_MS = 8_000;

export async function startEnvironment(options: { process: boolean; sealed?: boolean }): Promise<FuzzEnvironment> {
  const sandbox = await startPaidSandbox();
  if (options.sealed) createSealedTables(sandbox.databasePath);
  const started: FuzzServer[] = [];
  // As `arrow402 serve` does (README "Limits and behaviour under load"): heads up to 64 KiB. The
  // limit is the process's: it is put back afterwards for the other test files.
  const headLimit = requestHeadLimit();
  const restoreHeadLimit = () => ((http as { maxHeaderSize: number }).maxHeaderSize = headLimit);
  try {
    raiseRequestHeadLimit(16_384);
    const dashboards = writeDashboards(sandbox.dir);
    const main = await inProcess(sandbox, "main", MAIN_LIMITS, { dashboards: { root: dashboards, entries: [{ slug: "dex", title: "DEX", table: "flat_items" }, { slug: "free-kinds", title: "Kinds", table: "kinds" }] } });
    started.push(main);
    const tight = await inProcess(sandbox, "tight", TIGHT_LIMITS, { dashboards: { root: join(sandbox.dir, "not-generated"), entries: [{ slug: "dex", title: "DEX", table: "flat_items" }] } });
    started.push(tight);
    const process = options.process ? await subprocess(sandbox) : null;
    if (process) started.push(process);
    const sealed = options.sealed ? await inProcess(sandbox, "sealed", SEALED_LIMITS, { tables: sealedTables(sandbox.devnet.payTo), facilitatorTimeoutMs: SEALED_FACILITATOR_TIMEOUT_MS }) : null;
    if (sealed) started.push(sealed);
    const reads = new TableReads(sandbox.databasePath);
    return {
      sandbox,
      catalog: readCatalog(sandbox.databasePath, main.config),
      reads,
      main,
      tight,
      process,
      sealed,
      servers: () => [...started],
      async stop() {
        reads.close();
        for (const server of started) await server.stop();
        await sandbox.stop();
        restoreHeadLimit();
      },
    };
  } catch (error) {
    for (const server of started) await server.stop();
    await sandbox.stop();
    restoreHeadLimit();
    throw error;
  }
}

/** Dashboards as generated ones look, a secret beside their root, and a symlink from inside to it. */
function writeDashboards(dir: string): string {
  const root = join(dir, "dashboards");
  mkdirSync(join(root, "dex", "sub"), { recursive: true });
  mkdirSync(join(root, "free-kinds"), { recursive: true });
  writeFileSync(join(root, "index.html"), "<!doctype html><title>landing</title>");
  writeFileSync(join(root, "dex", "index.html"), "<!doctype html><title>dex</title>");
  writeFileSync(join(root, "dex", "sub", "index.html"), "<!doctype html><title>sub</title>");
  writeFileSync(join(root, "dex", "notes.txt"), "notes");
  writeFileSync(join(root, "free-kinds", "index.html"), "<!doctype html><title>kinds</title>");
  writeFileSync(join(dir, "secret.txt"), SECRET_MARKER);
  writeFileSync(join(root, ".hidden"), SECRET_MARKER);
  symlinkSync(join(dir, "secret.txt"), join(root, "dex", "link.txt"));
  symlinkSync(dir, join(root, "dex", "up"));
  return root;
}

/** What sets a server apart beyond its limits (defaults: no dashboards, the default tables, FACILITATOR_TIMEOUT_MS). */
interface Setup {
  dashboards?: { root: string; entries: unknown[] };
  tables?: unknown[];
  facilitatorTimeoutMs?: number;
}

function rawConfig(sandbox: PaidSandbox, name: string, limits: Limits, bind: string, setup: Setup = {}) {
  const { key: _key, ...token } = sandbox.devnet.tokenConfig();
  const { dashboards, tables = defaultTables(sandbox.devnet.payTo), facilitatorTimeoutMs = FACILITATOR_TIMEOUT_MS } = setup;
  return {
    server: { bind },
    facilitator: { url: sandbox.proxy.url, timeout_ms: facilitatorTimeoutMs },
    database: { sqlite: "./paid.sqlite" },
    ledger: { path: `./fuzz-${name}/ledger.sqlite` },
    payment: { max_timeout_seconds: 300, default_description: QUERY_DESCRIPTION },
    limits,
    rpc_urls: { [String(sandbox.devnet.chainId)]: sandbox.devnet.rpcUrl },
    tokens: { [TOKEN_KEY]: { ...token, symbol: TOKEN_SYMBOL, network_label: "devnet" } },
    tables,
    ...(dashboards === undefined ? {} : { dashboards }),
  };
}

function boundFor(limits: Limits, facilitatorTimeoutMs = FACILITATOR_TIMEOUT_MS): number {
  // A validation may wait 2 s for a validator; a query waits for a worker, then runs, each up to the time limit.
  return 2_000 + 2 * limits.query_timeout_ms + 2 * facilitatorTimeoutMs + MARGIN_MS;
}

async function inProcess(sandbox: PaidSandbox, name: string, limits: Limits, setup: Setup = {}): Promise<FuzzServer> {
  const path = join(sandbox.dir, `fuzz-${name}.yaml`);
  writeFileSync(path, Bun.YAML.stringify(rawConfig(sandbox, name, limits, "127.0.0.1:0", setup), null, 2));
  const config = resolveConfig(Bun.YAML.parse(await Bun.file(path).text()), { baseDir: sandbox.dir, env: {} });
  const running = await startServer(config);
  return {
    name,
    url: running.url,
    origin: new URL(running.url),
    headLimit: requestHeadLimit(),
    boundMs: boundFor(limits, setup.facilitatorTimeoutMs),
    config: { ...config, server: { ...config.server, baseUrl: running.url } },
    ledgerPath: config.ledger.path!,
    slugs: config.dashboards?.entries.map((entry) => entry.slug) ?? [],
    alive: () => true,
    output: () => "",
    stop: () => running.stop(),
  };
}

async function subprocess(sandbox: PaidSandbox): Promise<FuzzServer> {
  const dir = join(sandbox.dir, "process");
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const raw = rawConfig(sandbox, "process", MAIN_LIMITS, `127.0.0.1:${port}`);
  raw.database.sqlite = sandbox.databasePath;
  const path = join(dir, "arrow402.yaml");
  writeFileSync(path, Bun.YAML.stringify(raw, null, 2));
  const child: ServerProcess = await spawnServe({ path, dir, port, url: `http://127.0.0.1:${port}` });
  let exited = false;
  void child.exited.then(() => (exited = true));
  const config = resolveConfig(raw, { baseDir: dir, env: {} });
  return {
    name: "process",
    url: child.url,
    origin: new URL(child.url),
    // `serve` raises the limit to max(64 KiB, 3 × max_query_bytes + 16 KiB) (routes/header-budget.ts).
    headLimit: 64 * 1024,
    boundMs: boundFor(MAIN_LIMITS),
    config,
    ledgerPath: config.ledger.path!,
    slugs: [],
    alive: () => !exited,
    output: child.output,
    stop: () => child.kill(),
  };
}

/** Tables and columns as the database has them; paid when the config prices their queries. */
function readCatalog(databasePath: string, config: Config): FuzzCatalog {
  const db = new Database(databasePath, { readonly: true });
  try {
    return {
      tables: config.tables.map((table) => ({
        name: table.name,
        columns: db.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table.name}')`).all().map((column) => column.name),
        paid: table.priceTags.some((tag) => tag.type !== "metadata_price"),
      })),
    };
  } finally {
    db.close();
  }
}
