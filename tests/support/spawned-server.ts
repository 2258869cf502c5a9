/**
 * `arrow402 serve` as a child process (`bun src/main.ts serve`), on a config written as YAML into
 * `dir` and bound to a free loopback port: the tests that measure the server's own memory, reads
 * or connections from outside it. bench/processes.ts stops it when the test process exits.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnServer, type ChildServer } from "../../bench/processes.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

export async function serveConfig(dir: string, config: Record<string, unknown>, file = "arrow402.yaml"): Promise<ChildServer> {
  writeFileSync(join(dir, file), Bun.YAML.stringify(config));
  return spawnServer(["bun", MAIN, "serve", "--config", join(dir, file), "--bind", "127.0.0.1:0"], / on (http:\/\/\S+)/);
}
