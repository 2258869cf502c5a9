/**
 * arrow402 under test, as its own process: `bun src/main.ts serve --config <yaml> --bind
 * 127.0.0.1:0`, its URL read from its stdout. Each setup gets a fresh folder in bench/out/ for its
 * config and SQLite ledger.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_OUT } from "./dataset.ts";
import { spawnServer, type ChildServer } from "./processes.ts";

/** The checkout whose src/ is under test (bench/ab.ts passes others). */
const ROOT = join(import.meta.dir, "..");

/** A fresh, empty folder bench/out/<name>. */
export function freshDir(name: string): string {
  const dir = join(BENCH_OUT, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes `config` as YAML to `<dir>/<file>` and returns its path. */
export function writeConfig(dir: string, config: object, file = "arrow402.yaml"): string {
  const path = join(dir, file);
  writeFileSync(path, Bun.YAML.stringify(config, null, 2));
  return path;
}

/** Starts arrow402 on a free port with the given config file, from the checkout at `root`. */
export function startArrow402(configPath: string, root = ROOT): Promise<ChildServer> {
  return spawnServer(
    // The header size flag is what `bun run start` passes: a PAYMENT-SIGNATURE can exceed Bun's 16 KiB default.
    ["bun", "--max-http-header-size=65536", join(root, "src", "main.ts"), "serve", "--config", configPath, "--bind", "127.0.0.1:0"],
    / on (http:\/\/\S+)/,
  );
}

/** Runs `body` with the server, then stops it whatever happens. */
export async function withServer<T>(start: () => Promise<ChildServer>, body: (server: ChildServer) => Promise<T>): Promise<T> {
  const server = await start();
  try {
    return await body(server);
  } finally {
    await server.stop();
  }
}
