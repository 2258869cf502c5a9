/**
 * A real PostgreSQL server for tests (ARCHITECTURE.md §11 "Replicas": tests use a real PostgreSQL, never a
 * mock): `initdb` into a temporary folder, `postgres` on a free 127.0.0.1 port with its socket in
 * that folder, trust authentication on loopback. Started as the `postgres` OS user when the tests
 * run as root (the server refuses to run as root). Tuned for tests, not for safety: fsync off.
 *
 * The server cannot outlive the test process: `stop()` (fast shutdown), exit/SIGINT/SIGTERM
 * handlers, and a watchdog shell loop that stops it once the test process is gone without running
 * any handler (SIGKILL, crash), as devnet/chain.ts does for anvil.
 */
import { afterAll, beforeAll } from "bun:test";
import { SQL } from "bun";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnWatchdog, stopOnProcessEnd } from "../../devnet/process-end.ts";

/** What the watchdog does once our pid is gone: stop the server ($2), wait for it, remove its folder ($3). */
const STOP_AND_REMOVE = 'kill -INT "$2" 2>/dev/null; while kill -0 "$2" 2>/dev/null; do sleep 0.2; done; rm -rf "$3"';

export interface PostgresServer {
  /** URL of the `postgres` maintenance database, e.g. postgres://postgres@127.0.0.1:54321/postgres. */
  url: string;
  port: number;
  /** Process id of the postmaster (throws while halted). */
  readonly pid: number;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Fast shutdown (open connections are ended), then the folder is removed; idempotent. */
  stop(): Promise<void>;
  /** Fast shutdown that keeps the data: every connection to `port` is refused until `resume`. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port and data (a no-op while it runs). */
  resume(): Promise<void>;
  /**
   * Stops every process of the server (SIGSTOP: the postmaster and its backends) without closing
   * any connection: clients wait for answers that do not come, as behind a network partition.
   */
  freeze(): void;
  /** Lets a frozen server run again (SIGCONT); a no-op once halted or stopped. */
  thaw(): void;
}

interface Running {
  postgres: Bun.Subprocess;
  watchdog: Bun.Subprocess;
  detach: () => void;
}

/** Test hooks (`beforeAll`/`afterAll`) for a test file: its own server and a fresh database. */
export interface PostgresForTests {
  /** The fresh database's URL (after `beforeAll`). */
  readonly url: string;
  readonly server: PostgresServer;
}

const START_TIMEOUT_MS = 30_000;
const HOOK_TIMEOUT_MS = 60_000;

export function usePostgres(): PostgresForTests {
  let server: PostgresServer | undefined;
  let url: string | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await server?.stop();
  }, HOOK_TIMEOUT_MS);
  return {
    get url() {
      if (url === undefined) throw new Error("the PostgreSQL test server is not started yet (use its url inside tests or hooks)");
      return url;
    },
    get server() {
      if (server === undefined) throw new Error("the PostgreSQL test server is not started yet");
      return server;
    },
  };
}

export interface PostgresOptions {
  /** Server settings (`-c name=value`) over the test defaults, e.g. `{ fsync: "on" }` to measure real commits. */
  settings?: Record<string, string>;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const owner = serverOwner();
  const dir = mkdtempSync(join(tmpdir(), "arrow402-pg-"));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const dataDir = join(dir, "data");
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C", LC_ALL: "C", TZ: "UTC" };

  const init = Bun.spawnSync(
    [join(bin, "initdb"), "-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
    // cwd: the postgres user may not be allowed into ours (e.g. under /root).
    { cwd: dir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", ...owner },
  );
  if (init.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr.toString().trim() || init.stdout.toString().trim()}`);
  }

  // A port picked now may be taken by the time the server binds it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      return await launch(bin, dir, dataDir, port, env, owner, options.settings ?? {});
    } catch (error) {
      lastError = error;
      if (!/already in use|could not bind/i.test(String(error))) break;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

async function launch(
  bin: string,
  dir: string,
  dataDir: string,
  port: number,
  env: Record<string, string>,
  owner: { uid: number; gid: number } | undefined,
  extraSettings: Record<string, string>,
): Promise<PostgresServer> {
  const settings = {
    listen_addresses: "127.0.0.1",
    port: String(port),
    unix_socket_directories: dir,
    fsync: "off",
    full_page_writes: "off",
    shared_buffers: "16MB",
    max_connections: "100",
    logging_collector: "off",
    ...extraSettings,
  };
  const args = Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let runs = 0;

  /** Starts the postmaster on the data folder and waits until it answers. */
  async function run(): Promise<Running> {
    runs += 1;
    // Logs go to a file (one per run): nothing has to drain a pipe, and a chatty server can never block on one.
    const logPath = join(dir, `postgres-${port}-${runs}.log`);
    const postgres = Bun.spawn([join(bin, "postgres"), "-D", dataDir, ...args], {
      cwd: dir,
      env,
      stdin: "ignore",
      stdout: Bun.file(logPath),
      stderr: Bun.file(logPath),
      ...owner,
    });
    postgres.unref();
    const running = { postgres, watchdog: spawnWatchdog("postgres-watchdog", postgres.pid, STOP_AND_REMOVE, [dir]), detach: stopOnProcessEnd(postgres, "SIGINT") };
    try {
      await waitForReady(postgres, logPath, url);
    } catch (error) {
      running.detach();
      postgres.kill("SIGKILL");
      await postgres.exited;
      running.watchdog.kill();
      throw error;
    }
    return running;
  }

  /** Fast shutdown (open connections are ended, nothing is waited for); the data folder stays. */
  async function end(running: Running): Promise<void> {
    running.detach();
    running.postgres.kill("SIGINT");
    const exited = await Promise.race([running.postgres.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
    if (!exited) {
      running.postgres.kill("SIGKILL");
      await running.postgres.exited;
    }
    running.watchdog.kill();
  }

  let current: Running | null = await run();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (current !== null) await end(current);
    current = null;
    rmSync(dir, { recursive: true, force: true });
  };

  /** The postmaster and its children (backends, background workers). */
  const signalAll = (signal: "STOP" | "CONT") => {
    if (current === null) {
      if (signal === "CONT") return; // halted or stopped: nothing left to let run
      throw new Error("the PostgreSQL test server is halted");
    }
    const pid = current.postgres.pid;
    if (signal === "CONT") {
      for (const target of [pid, ...childrenOf(pid)]) process.kill(target, "SIGCONT");
      return;
    }
    // The postmaster first, and only once it is stopped are its children listed: a backend it forks
    // while the list is read (a connection the pool opens just then) would otherwise run on and answer.
    process.kill(pid, "SIGSTOP");
    const until = performance.now() + 2_000;
    while (processState(pid) !== "T" && performance.now() < until) Bun.sleepSync(1);
    const stopped = new Set<number>();
    for (let fresh = childrenOf(pid); fresh.length > 0; fresh = childrenOf(pid).filter((child) => !stopped.has(child))) {
      for (const child of fresh) {
        process.kill(child, "SIGSTOP");
        stopped.add(child);
      }
    }
  };

  let databases = 0;
  return {
    url,
    port,
    get pid() {
      if (current === null) throw new Error("the PostgreSQL test server is halted");
      return current.postgres.pid;
    },
    stop,
    async halt() {
      if (stopped || current === null) return;
      const running = current;
      current = null;
      await end(running);
    },
    async resume() {
      if (stopped) throw new Error("the PostgreSQL test server was stopped; start a new one");
      if (current === null) current = await run();
    },
    freeze() {
      signalAll("STOP");
    },
    thaw() {
      signalAll("CONT");
    },
    async createDatabase(name) {
      databases += 1;
      const database = name ?? `test_${databases}_${process.pid}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`database name '${database}' must be lower-case letters, digits and _`);
      const admin = new SQL({ url, max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE ${database}`);
      } finally {
        await admin.close();
      }
      return `postgres://postgres@127.0.0.1:${port}/${database}`;
    },
  };
}

/** Process ids whose parent is `pid`, from /proc (Linux; no procps needed). */
/** A process's state letter from /proc (T: stopped), or null once it has ended. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null;
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat is "pid (comm) state ppid …"; comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return children;
}

/** The newest installed PostgreSQL's bin folder (Debian keeps them in /usr/lib/postgresql/<major>/bin), or PATH. */
export function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+(\.\d+)?$/.test(name) && existsSync(join(root, name, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0] !== undefined) return join(root, majors[0], "bin");
  const onPath = Bun.which("postgres");
  if (onPath !== null && existsSync(join(dirname(onPath), "initdb"))) return dirname(onPath);
  throw new Error(
    "PostgreSQL is not installed: run `sh scripts/test-tools.sh` as root (it installs Debian's postgresql), or install PostgreSQL and put its bin folder (initdb, postgres) on PATH",
  );
}

/** The server runs as `postgres` when we are root (it refuses root); otherwise as ourselves. */
function serverOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Bun.spawnSync(["id", flag, "postgres"], { stdout: "pipe", stderr: "pipe" });
  const uid = id("-u");
  const gid = id("-g");
  if (uid.exitCode !== 0 || gid.exitCode !== 0) {
    throw new Error("the tests run as root and there is no 'postgres' user to run PostgreSQL as: install Debian's postgresql package (sh scripts/test-tools.sh)");
  }
  return { uid: Number(uid.stdout.toString().trim()), gid: Number(gid.stdout.toString().trim()) };
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitForReady(postgres: Bun.Subprocess, logPath: string, url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (postgres.exitCode !== null || postgres.signalCode !== null) {
      const log = await Bun.file(logPath).text().catch(() => "");
      throw new Error(`postgres exited before accepting connections: ${log.trim().split("\n").slice(-3).join(" | ")}`);
    }
    const log = await Bun.file(logPath).text().catch(() => "");
    if (log.includes("ready to accept connections")) {
      const probe = new SQL({ url, max: 1, connectionTimeout: 5 });
      try {
        await probe`SELECT 1`;
        return;
      } catch {
        // not answering yet
      } finally {
        await probe.close();
      }
    }
    await Bun.sleep(50);
  }
  throw new Error(`postgres did not accept connections within ${START_TIMEOUT_MS} ms (log: ${logPath})`);
}
