/**
 * `arrow402 serve` as a real subprocess (`bun src/main.ts serve --config …`) for the tests that kill
 * a server (SIGKILL) and start it again, or run replicas side by side. Each process binds a port
 * chosen here, so a restart with the same config answers at the same address and sells the same
 * resource URLs. Output goes to a log file (nothing has to drain a pipe).
 *
 * No process outlives the tests: `stopAll()` (call it in afterAll), an exit handler, and a watchdog
 * shell loop that kills the server once the test process is gone without running any handler.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import type { Devnet, EndpointBehaviour } from "../../devnet/index.ts";
import { spawnWatchdog } from "../../devnet/process-end.ts";
import { defaultTables, QUERY_DESCRIPTION, TOKEN_KEY, TOKEN_SYMBOL } from "./paid-server.ts";

const ROOT = join(import.meta.dir, "../..");
const START_TIMEOUT_MS = 30_000;

export interface ServeConfigOptions {
  /** Folder of the config file; the data file is copied there as paid.sqlite (each server its own copy). */
  dir: string;
  devnet: Devnet;
  databasePath: string;
  facilitatorUrl: string;
  /** Default 4000 ms (ten times a devnet settlement), so that a test whose facilitator fails ends soon. */
  facilitatorTimeoutMs?: number;
  /** Default 1000 ms. */
  queryTimeoutMs?: number;
  ledger: { path: string } | { url: string };
  /** JSON-RPC endpoint for the devnet's chain: default the devnet's anvil; null: none configured. */
  rpcUrl?: string | null;
  /** Shared by replicas behind one public address; default: the server's own address. */
  baseUrl?: string;
  /** Default: a free port picked now, kept across restarts. */
  port?: number;
  /** Default: defaultTables (paid-server.ts). */
  tables?: unknown[];
  /** More keys of `limits:`. */
  limits?: Record<string, unknown>;
}

export interface ServeConfig {
  path: string;
  dir: string;
  port: number;
  url: string;
}

/** Writes the YAML config of a server over its own copy of the data file. */
export async function writeServeConfig(options: ServeConfigOptions): Promise<ServeConfig> {
  mkdirSync(options.dir, { recursive: true });
  copyFileSync(options.databasePath, join(options.dir, "paid.sqlite"));
  const port = options.port ?? (await freePort());
  const { key: _key, ...token } = options.devnet.tokenConfig();
  const rpcUrl = options.rpcUrl === undefined ? options.devnet.rpcUrl : options.rpcUrl;
  const raw = {
    server: { bind: `127.0.0.1:${port}`, ...(options.baseUrl === undefined ? {} : { base_url: options.baseUrl }) },
    facilitator: { url: options.facilitatorUrl, timeout_ms: options.facilitatorTimeoutMs ?? 4_000 },
    database: { sqlite: "./paid.sqlite" },
    ledger: options.ledger,
    payment: { max_timeout_seconds: 300, default_description: QUERY_DESCRIPTION },
    limits: { query_timeout_ms: options.queryTimeoutMs ?? 1_000, ...options.limits },
    ...(rpcUrl === null ? {} : { rpc_urls: { [String(options.devnet.chainId)]: rpcUrl } }),
    tokens: { [TOKEN_KEY]: { ...token, symbol: TOKEN_SYMBOL, network_label: "devnet" } },
    tables: options.tables ?? defaultTables(options.devnet.payTo),
  };
  const path = join(options.dir, "arrow402.yaml");
  writeFileSync(path, Bun.YAML.stringify(raw, null, 2));
  return { path, dir: options.dir, port, url: `http://127.0.0.1:${port}` };
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** stdout and stderr so far. */
  output(): string;
  /** SIGKILL, and waits until the process is gone. */
  kill(): Promise<void>;
  exited: Promise<number>;
}

const running = new Set<{ proc: Bun.Subprocess; watchdog: Bun.Subprocess }>();
let exitHandler = false;

/** Starts `arrow402 serve --config <path>` and waits until it answers `GET /api/`. */
export async function spawnServe(config: ServeConfig): Promise<ServerProcess> {
  const logPath = join(config.dir, `serve-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`);
  writeFileSync(logPath, "");
  const proc = Bun.spawn(["bun", "--max-http-header-size=65536", join(ROOT, "src/main.ts"), "serve", "--config", config.path], {
    cwd: config.dir,
    env: { ...process.env, NO_COLOR: "1" },
    stdin: "ignore",
    stdout: Bun.file(logPath),
    stderr: Bun.file(logPath),
  });
  const entry = { proc, watchdog: spawnWatchdog("serve-watchdog", proc.pid, 'kill -KILL "$2" 2>/dev/null; exit 0') };
  running.add(entry);
  if (!exitHandler) {
    exitHandler = true;
    process.on("exit", () => {
      for (const { proc: child, watchdog } of running) {
        child.kill("SIGKILL");
        watchdog.kill();
      }
    });
  }
  const output = () => readFileSync(logPath, "utf8");
  const exited = proc.exited.then((code) => {
    entry.watchdog.kill();
    running.delete(entry);
    return code;
  });
  const server: ServerProcess = {
    url: config.url,
    pid: proc.pid,
    output,
    exited,
    async kill() {
      proc.kill("SIGKILL");
      await exited;
    },
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`arrow402 serve exited before answering: ${output().trim()}`);
    const answered = await fetch(`${config.url}/api/`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (answered) return server;
    await Bun.sleep(50);
  }
  await server.kill();
  throw new Error(`arrow402 serve did not answer on ${config.url} within ${START_TIMEOUT_MS} ms: ${output().trim()}`);
}

/** Kills every server still running (afterAll, also after a failed test). */
export async function stopAllServers(): Promise<void> {
  await Promise.all(
    [...running].map(async ({ proc }) => {
      proc.kill("SIGKILL");
      await proc.exited;
    }),
  );
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface HeldSettlement {
  /** The proxy's behaviour for `/settle`. */
  behaviour: EndpointBehaviour;
  /**
   * Resolves once the held request has arrived (`before-transfer`) or once the real facilitator has
   * settled it (`after-transfer`: its reply, the transfer is on chain).
   */
  reached: Promise<{ success?: boolean; transaction?: string } | undefined>;
  /** Lets go of the held request without answering it (no forwarding ever happens). */
  release(): void;
}

/**
 * A `/settle` that never answers: `after-transfer` forwards it to the real facilitator, waits for
 * the settlement, then holds the connection (the process that sent it dies waiting);
 * `before-transfer` holds it without forwarding (the settlement never reaches the chain).
 */
export function holdSettle(facilitatorUrl: string, when: "before-transfer" | "after-transfer"): HeldSettlement {
  let reached!: (reply: { success?: boolean; transaction?: string } | undefined) => void;
  let failed!: (error: unknown) => void;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reachedPromise = new Promise<{ success?: boolean; transaction?: string } | undefined>((resolve, reject) => {
    reached = resolve;
    failed = reject;
  });
  const behaviour: EndpointBehaviour = {
    kind: "hook",
    async before(body) {
      if (when === "after-transfer") {
        try {
          const reply = await fetch(`${facilitatorUrl.replace(/\/+$/, "")}/settle`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          reached((await reply.json()) as { success?: boolean; transaction?: string });
        } catch (error) {
          failed(error);
        }
      } else {
        reached(undefined);
      }
      await released;
      // Never forward: the proxy answers 502 to a connection that is long gone.
      throw new Error("held settlement released without an answer");
    },
  };
  return { behaviour, reached: reachedPromise, release };
}
