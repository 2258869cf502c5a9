/**
 * `bun run build`: the single executable dist/arrow402 (ARCHITECTURE.md §1, DESIGN.md §14 "One
 * executable still"). As `bun build --compile`, plus DuckDB's native driver: its own loader
 * (@duckdb/node-bindings) requires the binding of every platform and finds libduckdb.so beside
 * duckdb.node on disk, neither of which works from inside an executable. The plugin below replaces
 * that loader with one that embeds this platform's duckdb.node and libduckdb.so and unpacks them to
 * a cache folder on first use (src/engines/duckdb/unpack.ts).
 */
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const platform = `${process.platform}-${process.arch}`;
const bindings = join(ROOT, "node_modules", "@duckdb", `node-bindings-${platform}`);
const version = (await Bun.file(join(ROOT, "node_modules/@duckdb/node-bindings/package.json")).json()).version as string;

const embedDuckDB: Bun.BunPlugin = {
  name: "embed-duckdb",
  setup(build) {
    build.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({ path: "duckdb-binding", namespace: "arrow402" }));
    build.onLoad({ filter: /^duckdb-binding$/, namespace: "arrow402" }, () => ({
      loader: "js",
      contents: [
        `import library from ${JSON.stringify(join(bindings, "libduckdb.so"))} with { type: "file" };`,
        `import binding from ${JSON.stringify(join(bindings, "duckdb.node"))} with { type: "file" };`,
        `import { loadEmbeddedBinding } from ${JSON.stringify(join(ROOT, "src/engines/duckdb/unpack.ts"))};`,
        "export const __esModule = true;",
        `export default loadEmbeddedBinding(library, binding, ${JSON.stringify(version)});`,
      ].join("\n"),
    }));
  },
};

const result = await Bun.build({
  entrypoints: ["src/main.ts", "src/engines/sqlite/worker.ts", "src/sql/validation-worker.ts"].map((entry) => join(ROOT, entry)),
  compile: { outfile: join(ROOT, "dist/arrow402") },
  minify: true,
  plugins: [embedDuckDB],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`dist/arrow402 (DuckDB ${version}, ${platform})`);
