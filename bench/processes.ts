/**
 * Servers under test run as child processes, so that their CPU time and memory are theirs alone:
 * the bench process is only the client. Memory and read volume come from /proc (Linux).
 */
import { readFileSync, writeFileSync } from "node:fs";

export interface ChildServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

/** Spawns `command` and waits for a line of its stdout matching `urlPattern` (first group: the URL). */
export async function spawnServer(command: string[], urlPattern: RegExp, cwd?: string): Promise<ChildServer> {
  const child = Bun.spawn(command, { cwd, stdout: "pipe", stderr: "inherit", env: { ...process.env, NO_COLOR: "1" } });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  const deadline = Date.now() + START_TIMEOUT_MS;
  let url: string | undefined;
  while (url === undefined) {
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`${command.join(" ")} printed no URL within ${START_TIMEOUT_MS} ms:\n${seen}`);
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`${command.join(" ")} exited before printing its URL:\n${seen}`);
    seen += decoder.decode(value, { stream: true });
    url = urlPattern.exec(seen)?.[1];
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return {
    url,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
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
 * over a table adds about the database file's size: a count is one pass, a scan is one pass.
 */
export function bytesRead(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? NaN);
}
