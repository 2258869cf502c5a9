/**
 * The anvil chain's lifetime: it ends with stop(), and it ends by itself when the process that
 * started it is killed outright (the watchdog), so no test run leaves a chain behind.
 */
import { readFileSync } from "node:fs";
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

  test("stop() ends the anvil process", async () => {
    const started = await startChain();
    expect(alive(started.pid)).toBe(true);
    await started.stop();
    expect(alive(started.pid)).toBe(false);
  });

  test("a chain whose parent is killed outright stops by itself", async () => {
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
    child.kill("SIGKILL");
    await child.exited;
    for (let i = 0; i < 100 && alive(pid); i++) await Bun.sleep(100);
    expect(alive(pid)).toBe(false);
  }, 30_000);
});
