/**
 * A local anvil chain (chain id 31337) that cannot outlive the process that started it.
 *
 * The `@foundry-rs/anvil` launcher is a Node wrapper: killing it would leave the real chain
 * running (ARCHITECTURE.md §10). We therefore spawn the binary shipped in the platform package
 * directly, so that the pid we hold is the chain itself, and stop it three ways:
 * `stop()`, process exit / SIGINT / SIGTERM, and a watchdog shell process that kills the chain
 * when our process disappears without running any handler (SIGKILL, crash).
 */
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnWatchdog, stopOnProcessEnd } from "./process-end.ts";

export interface Chain {
  rpcUrl: string;
  port: number;
  chainId: 31337;
  /** Process id of the anvil binary. */
  pid: number;
  stop(): Promise<void>;
}

export interface ChainOptions {
  /** Fixed port; default 0 (the OS picks a free one). */
  port?: number;
  /** Milliseconds to wait for the RPC to answer before giving up. */
  startTimeoutMs?: number;
}

export const DEVNET_CHAIN_ID = 31337 as const;

const PLATFORM_PACKAGES: Record<string, string> = {
  "linux-x64": "@foundry-rs/anvil-linux-amd64",
  "linux-arm64": "@foundry-rs/anvil-linux-arm64",
  "darwin-x64": "@foundry-rs/anvil-darwin-amd64",
  "darwin-arm64": "@foundry-rs/anvil-darwin-arm64",
};

/**
 * Path of the anvil executable from the platform package. The package's postinstall (blocked
 * by Bun unless trusted) only matters when the optional platform package is missing; the
 * platform package itself ships the binary. If an unpacker dropped the executable bit, it is
 * restored here.
 */
export function anvilBinaryPath(): string {
  const pkg = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (!pkg) throw new Error(`anvil has no prebuilt binary for ${process.platform}-${process.arch}`);
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`${pkg} is not installed; run \`bun install\` (it is an optional dependency of @foundry-rs/anvil)`);
  }
  const binary = join(dirname(manifest), "bin", "anvil");
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    chmodSync(binary, statSync(binary).mode | 0o111);
  }
  return binary;
}

export async function startChain(options: ChainOptions = {}): Promise<Chain> {
  const dir = mkdtempSync(join(tmpdir(), "arrow402-anvil-"));
  const logDir = memoryFolder() ?? dir;
  const logPath = join(logDir, "anvil.log");
  const errPath = join(logDir, "anvil.err");
  // Logs go to a file rather than a pipe: nothing has to drain it, and a chatty chain can never
  // block on a full pipe buffer.
  const anvil = Bun.spawn(
    [
      anvilBinaryPath(),
      "--host", "127.0.0.1",
      "--port", String(options.port ?? 0),
      "--chain-id", String(DEVNET_CHAIN_ID),
      "--hardfork", "cancun",
      // States anvil moves out of memory (many blocks: a test mines 10,000) go under our folder,
      // removed at stop; by default they stay in ~/.foundry/anvil/tmp (~3 GB per such run).
      "--cache-path", join(dir, "states"),
    ],
    { stdin: "ignore", stdout: Bun.file(logPath), stderr: Bun.file(errPath) },
  );
  anvil.unref();
  // After our process is gone: stop the chain, and remove its folders once it has let go of them.
  const watchdog = spawnWatchdog("anvil-watchdog", anvil.pid, 'kill "$2" 2>/dev/null; sleep 1; rm -rf "$3" "$4"', [dir, logDir]);
  const detachHandlers = stopOnProcessEnd(anvil, "SIGTERM");

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    detachHandlers();
    anvil.kill("SIGTERM");
    await anvil.exited;
    watchdog.kill();
    rmSync(dir, { recursive: true, force: true });
    rmSync(logDir, { recursive: true, force: true });
  };

  try {
    const port = await waitForListening(anvil, logPath, errPath, options.startTimeoutMs ?? 15_000);
    const rpcUrl = `http://127.0.0.1:${port}`;
    await waitForRpc(rpcUrl, options.startTimeoutMs ?? 15_000);
    return { rpcUrl, port, chainId: DEVNET_CHAIN_ID, pid: anvil.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}


/**
 * A fresh folder in memory (Linux's /dev/shm), or undefined where there is none. anvil appends a
 * line per RPC call to its log; on the disk where a ledger commits with fsync (ext4), each commit
 * flushes the journal and those appends wait for it, so the facilitator's chain calls (and its
 * /verify) slowed down by ~0.4 ms whenever arrow402 recorded a payment. A remote facilitator never
 * shares our disk. The log stays small (a line per call); states, which can be large, stay on disk.
 */
function memoryFolder(): string | undefined {
  try {
    accessSync(SHARED_MEMORY, constants.W_OK);
    return mkdtempSync(join(SHARED_MEMORY, "arrow402-anvil-log-"));
  } catch {
    return undefined;
  }
}

const SHARED_MEMORY = "/dev/shm";

async function waitForListening(
  anvil: Bun.Subprocess,
  logPath: string,
  errPath: string,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const log = await Bun.file(logPath).text().catch(() => "");
    const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(log);
    if (match?.[1]) return Number(match[1]);
    if (anvil.exitCode !== null || anvil.signalCode !== null) {
      const errors = await Bun.file(errPath).text().catch(() => "");
      throw new Error(`anvil exited before listening: ${errors.trim() || log.trim().split("\n").at(-1)}`);
    }
    await Bun.sleep(50);
  }
  throw new Error(`anvil did not start listening within ${timeoutMs} ms`);
}

async function waitForRpc(rpcUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
  while (Date.now() < deadline) {
    try {
      const response = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
      const json = (await response.json()) as { result?: string };
      if (json.result && Number(json.result) === DEVNET_CHAIN_ID) return;
    } catch {
      // not answering yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`anvil RPC at ${rpcUrl} did not answer within ${timeoutMs} ms`);
}
