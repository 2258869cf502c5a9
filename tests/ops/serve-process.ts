/**
 * `arrow402 serve` as a real subprocess (`bun src/main.ts serve --config FILE`), for the signal
 * tests: its stdout and stderr collected line by line, the URL read from its start-up line, and a
 * way to wait for a line. Killed (SIGKILL) by `kill()` if still running, so no test leaves it behind.
 */
import { join } from "node:path";

const MAIN = join(import.meta.dir, "../../src/main.ts");
const START_TIMEOUT_MS = 30_000;

export interface ServeProcess {
  url: string;
  port: number;
  pid: number;
  out: string[];
  err: string[];
  /** stdout lines that are JSON objects (server.log: json). */
  events(): Record<string, any>[];
  /** Resolves with the first line (stdout or stderr) matching, waiting up to `timeoutMs`. */
  waitFor(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  signal(signal: NodeJS.Signals): void;
  exited: Promise<number>;
  kill(): Promise<void>;
}

export async function spawnServe(configPath: string, env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = Bun.spawn(["bun", MAIN, "serve", "--config", configPath], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const out: string[] = [];
  const err: string[] = [];
  let notify = () => {};
  const collect = async (stream: ReadableStream<Uint8Array>, into: string[]) => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop()!;
      into.push(...lines);
      notify();
    }
    if (pending !== "") into.push(pending);
    notify();
  };
  const reading = Promise.all([collect(child.stdout, out), collect(child.stderr, err)]);
  const exited = child.exited.then(async (code) => {
    await reading;
    return code;
  });

  const waitFor = async (match: (line: string) => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = [...out, ...err].find(match);
      if (found !== undefined) return found;
      if (Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`no matching line within ${timeoutMs} ms (exit ${child.exitCode}); stdout:\n${out.join("\n")}\nstderr:\n${err.join("\n")}`);
      }
      await Promise.race([new Promise<void>((resolve) => (notify = resolve)), Bun.sleep(50)]);
    }
  };

  const started = await waitFor((line) => / serving \d+ table\(s\) from .* on http:\/\//.test(line), START_TIMEOUT_MS);
  const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(started)![1]!;
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid,
    out,
    err,
    events: () =>
      out.flatMap((line) => {
        try {
          const value = JSON.parse(line);
          return typeof value === "object" && value !== null ? [value] : [];
        } catch {
          return [];
        }
      }),
    waitFor,
    signal: (signal) => child.kill(signal),
    exited,
    async kill() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Resolves true once a new TCP connection to the port is refused (polling up to `timeoutMs`). */
export async function refusesConnections(port: number, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const connected = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (socket) => {
        socket.end();
        return true;
      },
      () => false,
    );
    if (!connected) return true;
    await Bun.sleep(25);
  }
  return false;
}
