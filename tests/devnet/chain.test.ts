/**
 * The anvil chain's lifetime: it ends with stop(), and it ends by itself when the process that
 * started it is killed outright (the watchdog), so no test run leaves a chain, or its folders,
 * behind. Its log is kept in memory where Linux has /dev/shm, away from the disk a ledger fsyncs.
 */
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, test } from "bun:test";
import { startChain } from "../../devnet/chain.ts";

describe("chain lifecycle", () => {
  /** True while the process exists and is not a zombie waiting to be reaped. */
  function alive(pid: number): boolean {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
    } catch {
      return false;
    }
  }

  /** The chain's folders, as its process sees them: where its log goes, and its --cache-path's parent. */
  function folders(pid: number): { log: string; states: string } {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return { log: dirname(readlinkSync(`/proc/${pid}/fd/1`)), states: dirname(args[args.indexOf("--cache-path") + 1]!) };
  }

  test("stop() ends the anvil process and removes its folders", async () => {
    const started = await startChain();
    expect(alive(started.pid)).toBe(true);
    const { log, states } = folders(started.pid);
    if (existsSync("/dev/shm")) expect(log).toStartWith("/dev/shm/arrow402-anvil-log-");
    expect([existsSync(log), existsSync(states)]).toEqual([true, true]);
    await started.stop();
    expect(alive(started.pid)).toBe(false);
    expect([existsSync(log), existsSync(states)]).toEqual([false, false]);
  });

  test("a chain whose parent is killed outright stops by itself and its folders go", async () => {
    const child = Bun.spawn(["bun", `${import.meta.dir}/fixtures/start-chain-and-wait.ts`], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    let output = "";
    while (!/anvil-pid (\d+)/.test(output)) {
      const { value, done } = await reader.read();
      if (done) break;
      output += new TextDecoder().decode(value);
    }
    const pid = Number(/anvil-pid (\d+)/.exec(output)?.[1]);
    expect(alive(pid)).toBe(true);
    const { log, states } = folders(pid);
    child.kill("SIGKILL");
    await child.exited;
    for (let i = 0; i < 100 && alive(pid); i++) await Bun.sleep(100);
    expect(alive(pid)).toBe(false);
    // The watchdog removes them a second after the chain has been told to stop.
    for (let i = 0; i < 50 && (existsSync(log) || existsSync(states)); i++) await Bun.sleep(100);
    expect([existsSync(log), existsSync(states)]).toEqual([false, false]);
  }, 30_000);
});
