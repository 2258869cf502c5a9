/**
 * Build-time bundling of browser code into one minified ES module: the dashboards' (browser/main.ts +
 * apache-arrow + Observable Plot) and the checkout's (checkout/browser/main.ts + the x402 client). Imported only as a Bun macro (`with { type: "macro" }`), so it
 * runs when the importing file is transpiled — by `bun test`, `bun src/main.ts` and
 * `bun build --compile` alike — and its result is inlined as a string. The compiled executable
 * therefore carries the bundle and needs no node_modules (ARCHITECTURE.md §7). A macro may not call
 * Bun.build (the bundler would wait on itself), hence the `bun build` subprocess.
 */
import { join } from "node:path";

export function buildBrowserBundle(entryInSrc = "dashboards/browser/main.ts"): string {
  const entry = join(import.meta.dir, "..", entryInSrc);
  const result = Bun.spawnSync(
    [process.execPath, "build", entry, "--target=browser", "--format=esm", "--minify"],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
  );
  if (result.exitCode !== 0) {
    throw new Error(`Bundling ${entryInSrc} for the browser failed:\n${result.stderr.toString()}`);
  }
  return result.stdout.toString();
}
