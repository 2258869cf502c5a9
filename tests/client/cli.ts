/**
 * Runs the real command line as a subprocess (`bun src/main.ts …`), stdin not a terminal, with
 * the environment given; returns exit code, stdout bytes and both texts.
 */
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dir, "..", "..");

export interface CliRun {
  code: number;
  stdout: Uint8Array;
  stdoutText: string;
  stderr: string;
}

export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const child = Bun.spawn(["bun", join(REPO_ROOT, "src", "main.ts"), ...args], {
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

/** The test process's own environment must not leak a key into runs that set none. */
function withoutKey(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const { ARROW402_PRIVATE_KEY: _ignored, ...rest } = env;
  return rest;
}
