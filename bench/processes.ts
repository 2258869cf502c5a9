/**
 * Servers under test run as child processes, so that their CPU time and memory are theirs alone:
 * the bench process is only the client. Memory, CPU time and read volume come from /proc (Linux).
 *
 * Every child is also registered here and killed when the bench process exits or is interrupted,
 * so a failed run leaves nothing listening.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

export interface ChildServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

const live = new Set<Bun.Subprocess>();
let handlersInstalled = false;

/** Kills every child still running when the bench ends, however it ends. */
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const killAll = () => {
    for (const child of live) child.kill("SIGKILL");
  };
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Registers a spawned child: it is killed at the latest when the bench process exits. */
export function track<T extends Bun.Subprocess>(child: T): T {
  installExitHandlers();
  live.add(child);
  void child.exited.then(() => live.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL if the child has not exited within STOP_GRACE_MS. */
export async function stopChild(child: Bun.Subprocess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await child.exited;
  clearTimeout(timer);
}

/** Spawns `command` and waits for a line of its stdout matching `urlPattern` (first group: the URL). */
export async function spawnServer(command: string[], urlPattern: RegExp, cwd?: string): Promise<ChildServer> {
  const child = track(Bun.spawn(command, { cwd, stdin: "ignore", stdout: "pipe", stderr: "inherit", env: { ...process.env, NO_COLOR: "1" } }));
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let url: string | undefined;
  const timeout = setTimeout(() => child.kill("SIGKILL"), START_TIMEOUT_MS);
  try {
    while (url === undefined) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${command.join(" ")} exited (or took over ${START_TIMEOUT_MS} ms) before printing its URL:\n${seen}`);
      seen += decoder.decode(value, { stream: true });
      url = urlPattern.exec(seen)?.[1];
    }
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timeout);
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return { url, pid: child.pid, stop: () => stopChild(child) };
}

/** Resident set size now and its peak since the last `resetPeakRss`, in bytes. */
export function residentBytes(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0: writing 5 to clear_refs). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/**
 * Bytes the process has passed through read()/pread() (`rchar` in /proc/PID/io). SQLite reads its
 * pages with pread (mmap is off by default and its page cache holds ~2 MB), so every full pass
 * over a table adds about the table's size: a count is one pass, a scan is one pass.
 */
export function bytesRead(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? NaN);
}

/** Clock ticks per second of utime/stime (USER_HZ: 100 on Linux for every architecture that matters here). */
const CLOCK_TICKS_PER_S = 100;

/**
 * CPU time the process has used so far, user + system, every thread included (utime + stime,
 * fields 14 and 15 of /proc/PID/stat), in milliseconds; 10 ms resolution.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`cannot read CPU time from /proc/${pid}/stat`);
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

/** Process ids whose parent is `pid`, from /proc. */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return children;
}

/**
 * CPU time of `pid` and its descendants alive now, plus what its reaped children used (cutime +
 * cstime), in milliseconds: for servers made of several processes (the devnet's facilitator and
 * anvil, PostgreSQL's postmaster and backends).
 */
export function treeCpuMs(pid: number): number {
  let total = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_S;
    } catch {
      continue; // ended meanwhile
    }
    pending.push(...childPids(current));
  }
  return total;
}
