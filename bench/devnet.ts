/**
 * The bench's handle on the devnet process (devnet-process.ts): its facilitator URL and accounts,
 * the arrow402 config pieces that price tables in its token, and a count of the facilitator's
 * /verify and /settle calls, read from the lines it prints.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_OUT } from "./dataset.ts";
import type { DevnetInfo } from "./devnet-process.ts";
import { stopChild, track } from "./processes.ts";

const START_TIMEOUT_MS = 120_000;

export interface FacilitatorCalls {
  verify: number;
  settle: number;
}

export interface DevnetProcess extends DevnetInfo {
  pid: number;
  /** /verify and /settle calls the facilitator has answered so far. */
  calls(): FacilitatorCalls;
  /** Waits until the facilitator has answered at least `calls` (the log lines arrive asynchronously). */
  waitForCalls(calls: FacilitatorCalls, timeoutMs?: number): Promise<void>;
  /** The `tokens:` section of an arrow402 config. */
  tokens(): Record<string, object>;
  /** A price tag in the devnet token paid to the devnet's recipient. */
  tag(fields: Record<string, string>): object;
  stop(): Promise<void>;
}

export async function startDevnetProcess(): Promise<DevnetProcess> {
  const child = track(Bun.spawn(["bun", join(import.meta.dir, "devnet-process.ts")], { stdin: "pipe", stdout: "pipe", stderr: "inherit" }));
  const counts: FacilitatorCalls = { verify: 0, settle: 0 };
  // Every /verify and /settle outcome of the run, to tell afterwards why a paid request failed.
  mkdirSync(BENCH_OUT, { recursive: true });
  const logFile = join(BENCH_OUT, "devnet.log");
  writeFileSync(logFile, "");
  const { promise: ready, resolve: resolveInfo, reject: rejectInfo } = Promise.withResolvers<DevnetInfo>();
  void (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.startsWith("devnet ")) resolveInfo(JSON.parse(line.slice("devnet ".length)) as DevnetInfo);
        else if (line.startsWith("facilitator: verify ")) counts.verify++;
        else if (line.startsWith("facilitator: settle ")) counts.settle++;
        if (line.startsWith("facilitator: ")) appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
      }
    }
    rejectInfo(new Error(`the devnet process exited (code ${await child.exited}) before it was ready`));
  })();
  const timer = setTimeout(() => child.kill("SIGKILL"), START_TIMEOUT_MS);
  let info: DevnetInfo;
  try {
    info = await ready;
  } catch (error) {
    await stopChild(child);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return {
    ...info,
    pid: child.pid,
    calls: () => ({ ...counts }),
    async waitForCalls(calls, timeoutMs = 5_000) {
      const deadline = performance.now() + timeoutMs;
      while (counts.verify < calls.verify || counts.settle < calls.settle) {
        if (performance.now() > deadline) {
          throw new Error(`the facilitator answered ${counts.verify} /verify and ${counts.settle} /settle calls, expected at least ${calls.verify} and ${calls.settle}`);
        }
        await Bun.sleep(10);
      }
    },
    tokens: () => {
      const { key, ...token } = info.token;
      return { [key]: { ...token, symbol: "tUSDC" } };
    },
    tag: (fields) => ({ pay_to: info.payTo, token: info.token.key, ...fields }),
    stop: () => stopChild(child),
  };
}
