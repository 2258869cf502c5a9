/**
 * Runs the real command line as a subprocess (`bun src/main.ts …`), stdin not a terminal, with
 * the environment given; returns exit code, stdout bytes and both texts. `runCliMeasured` also
 * gives the subprocess's peak resident memory, as GNU time measures it (its maximum RSS).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dir, "..", "..");

export interface CliRun {
  code: number;
  stdout: Uint8Array;
  stdoutText: string;
  stderr: string;
}

export async function runCli(args: string[], env: Record<string, string | undefined> = {}, prefix: string[] = []): Promise<CliRun> {
  const child = Bun.spawn([...prefix, "bun", join(REPO_ROOT, "src", "main.ts"), ...args], {
    cwd: REPO_ROOT,
    env: { ...withoutKey(process.env), NO_COLOR: "1", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).bytes(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stdoutText: new TextDecoder().decode(stdout), stderr };
}

/** GNU time, which reports a child's maximum resident set size; null where it is missing. */
export const GNU_TIME = ["/usr/bin/time", "/bin/time"].find((path) => Bun.spawnSync([path, "-f", "%M", "true"]).exitCode === 0) ?? null;

/** As runCli, with the peak resident memory of the CLI's process in bytes. */
export async function runCliMeasured(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun & { peakRssBytes: number }> {
  if (GNU_TIME === null) throw new Error("GNU time is needed to measure memory");
  const dir = mkdtempSync(join(tmpdir(), "arrow402-rss-"));
  try {
    const report = join(dir, "rss");
    const run = await runCli(args, env, [GNU_TIME, "-f", "%M", "-o", report]);
    const kilobytes = Number(readFileSync(report, "utf8").trim().split("\n").at(-1));
    return { ...run, peakRssBytes: kilobytes * 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The test process's own environment must not leak a key into runs that set none. */
function withoutKey(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const { ARROW402_PRIVATE_KEY: _ignored, ...rest } = env;
  return rest;
}
