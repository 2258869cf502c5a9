/**
 * The "get the full data" panel: its commands are run as written (sh, curl, the arrow402 CLI)
 * against a real server over the dashboards' market database, its MCP snippet is used by the
 * official MCP client, its formats table is checked against what the server answers, and hostile
 * names and URLs from the config come out escaped in HTML and quoted exactly for the shell.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { renderFullDataPanel } from "../../src/dashboards/full-data.ts";
import { FORMATS } from "../../src/formats/registry.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { REPO_ROOT } from "../client/cli.ts";
import { readParquetIndependently } from "../formats/support.ts";
import { setupDashboards, tempDir, type DashboardsSetup } from "./support.ts";

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const unescape = (html: string) => html.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);

/** The text of every `<pre><code>` block, unescaped, in order. */
function codeBlocks(html: string): string[] {
  return [...html.matchAll(/<pre><code>(.*?)<\/code><\/pre>/gs)].map((match) => unescape(match[1]!));
}

/** The words a POSIX shell makes of a command (each printed NUL-terminated by printf instead of run). */
function shellWords(command: string): string[] {
  const run = Bun.spawnSync(["sh", "-c", `words() { printf '%s\\0' "$@"; }; words ${command}`]);
  expect(run.exitCode).toBe(0);
  return run.stdout.toString().split("\0").slice(0, -1);
}

/**
 * Runs a panel command in `cwd` with `arrow402` being this repository's CLI (asynchronously: the
 * server answering it runs in this process).
 */
async function runAsWritten(command: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = `arrow402() { bun '${join(REPO_ROOT, "src", "main.ts")}' "$@"; }`;
  const child = Bun.spawn(["sh", "-c", `${cli}\n${command}`], { cwd, env: { ...process.env, ARROW402_PRIVATE_KEY: undefined }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

let setup: DashboardsSetup;
let server: RunningServer;

beforeAll(async () => {
  setup = setupDashboards([]);
  server = await startServer(setup.config, { workers: 1 });
});
afterAll(async () => {
  await server?.stop();
  setup?.db.close();
});

function panel(table: string, options: { baseUrl?: string; sampled?: boolean; mcpMaxRows?: number } = {}): string {
  const info = setup.catalog.table(table);
  if (!info) throw new Error(`no table ${table}`);
  return renderFullDataPanel(info, { baseUrl: server.url, sampled: false, mcpMaxRows: 1000, ...options });
}

describe("the commands, run as written on a free table", () => {
  const SQL = "SELECT * FROM blocks LIMIT 100";

  test("arrow402 query: a table on stdout, and Parquet to a file", async () => {
    const [cli] = codeBlocks(panel("blocks"));
    const [table, parquet] = cli!.split("\n");
    expect(shellWords(table!)).toEqual(["arrow402", "query", server.url, SQL]);
    expect(shellWords(parquet!)).toEqual(["arrow402", "query", server.url, SQL, "--format", "parquet", "--output", "blocks.parquet"]);

    const dir = tempDir();
    const printed = await runAsWritten(table!, dir);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(`0x${"a".padStart(64, "0")}`);
    const written = await runAsWritten(parquet!, dir);
    expect(written.stderr).toBe(`10 rows written to blocks.parquet (parquet)\n`);
    const file = readParquetIndependently(new Uint8Array(readFileSync(join(dir, "blocks.parquet"))));
    expect([...file.getChild("number")!]).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
  });

  test("curl, compressed: the Arrow stream, and CSV by its Accept header", async () => {
    const [, arrow, csv] = codeBlocks(panel("blocks"));
    const common = ["curl", "-sS", "--compressed", "-G", `${server.url}/api/query`];
    expect(shellWords(arrow!)).toEqual([...common, "--data-urlencode", `query=${SQL}`, "-o", "blocks.arrow"]);
    expect(shellWords(csv!)).toEqual([...common, "-H", "Accept: text/csv", "--data-urlencode", `query=${SQL}`, "-o", "blocks.csv"]);

    const dir = tempDir();
    for (const command of [arrow!, csv!]) expect((await runAsWritten(command, dir)).code).toBe(0);
    const table = tableFromIPC(readFileSync(join(dir, "blocks.arrow")));
    expect(table.numRows).toBe(10);
    const lines = readFileSync(join(dir, "blocks.csv"), "utf8").split("\r\n");
    expect(lines[0]).toBe("number,hash");
    expect(lines[10]).toBe(`10,0x${"a".padStart(64, "0")}`);
  });

  test("curl's --compressed gets a compressed transfer from the server", async () => {
    // An export large enough to be compressed (small answers are sent as they are): the swaps, free here.
    const free = setupDashboards([], { tables: [{ name: "swaps", description: "DEX swaps" }] });
    const exporter = await startServer(free.config, { workers: 1 });
    try {
      const dir = tempDir();
      const url = `${exporter.url}/api/query?query=${encodeURIComponent("SELECT * FROM swaps")}`;
      const run = await runAsWritten(`curl -sS --compressed -D head.txt -o swaps.arrow '${url}'`, dir);
      expect(run.code).toBe(0);
      expect(readFileSync(join(dir, "head.txt"), "utf8").toLowerCase()).toMatch(/\r\ncontent-encoding: (zstd|gzip)\r\n/);
      expect(tableFromIPC(readFileSync(join(dir, "swaps.arrow"))).numRows).toBe(1200);
    } finally {
      await exporter.stop();
      free.db.close();
    }
  });
});

describe("formats", () => {
  test("the table names every format the server serves, and each header and parameter gets it", async () => {
    const html = panel("blocks");
    const sql = encodeURIComponent("SELECT * FROM blocks");
    for (const format of FORMATS) {
      expect(html).toContain(`<td><code>Accept: ${format.mediaType}</code></td><td><code>format=${format.name}</code></td>`);
      const byHeader = await fetch(`${server.url}/api/query?query=${sql}`, { headers: { accept: format.mediaType } });
      const byParameter = await fetch(`${server.url}/api/query?query=${sql}&format=${format.name}`);
      for (const response of [byHeader, byParameter]) {
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe(format.contentType);
        await response.arrayBuffer();
      }
    }
  });
});

describe("MCP", () => {
  test("the snippet is the README's, with this server's URL, and the official client connects with it", async () => {
    const html = panel("blocks");
    const snippet = JSON.parse(codeBlocks(html).at(-1)!) as { mcpServers: { arrow402: { url: string } } };
    const url = `${server.url}/mcp`;
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const documented = readme.split("\n").find((line) => line.startsWith('{ "mcpServers"') && line.includes('"url"'));
    expect(snippet).toEqual(JSON.parse(documented!.replace("http://127.0.0.1:4021/mcp", url)));
    expect(html).toContain(`at <code>${url}</code>`);
    expect(unescape(html)).toContain(`claude mcp add --transport http arrow402 '${url}'`);

    const client = new Client({ name: "full-data-panel-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(snippet.mcpServers.arrow402.url)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["describe_table", "list_tables", "query"]);
    } finally {
      await client.close();
    }
  });

  test("states the configured row cap, and the payment flow only for a paid table", () => {
    expect(panel("blocks", { mcpMaxRows: 250 })).toContain("returns at most 250 rows per call");
    expect(panel("swaps", { mcpMaxRows: 25_000 })).toContain("returns at most 25,000 rows per call");
    expect(panel("blocks")).not.toContain("x402/payment");
    expect(panel("blocks")).not.toContain("402 Payment Required");
    expect(panel("swaps")).toContain("<code>_meta[&quot;x402/payment&quot;]</code>");
    expect(panel("swaps")).toContain("402 Payment Required");
  });
});

test("a hostile base URL and table name: escaped in HTML, exact for the shell and in the JSON", () => {
  const base = `https://data.example/o'brien/<b>"x"&y`;
  const hostile = setupDashboards([], {
    server: { bind: "127.0.0.1:0", base_url: base },
    tables: [{ name: "odd<table>", description: "<i>odd</i>" }],
  });
  try {
    const info = hostile.catalog.table("odd<table>")!;
    const html = renderFullDataPanel(info, { baseUrl: hostile.config.server.baseUrl, sampled: true, mcpMaxRows: 1000 });
    expect(html).not.toMatch(/<b>|<table>"|"x"/);
    expect(html).toContain("<code>odd&lt;table&gt;</code>");
    const [cli, arrow, , mcp] = codeBlocks(html);
    const sql = `SELECT * FROM "odd<table>" LIMIT 100`;
    expect(shellWords(cli!.split("\n")[1]!)).toEqual(["arrow402", "query", base, sql, "--format", "parquet", "--output", "odd_table_.parquet"]);
    expect(shellWords(arrow!)).toEqual(["curl", "-sS", "--compressed", "-G", `${base}/api/query`, "--data-urlencode", `query=${sql}`, "-o", "odd_table_.arrow"]);
    expect(JSON.parse(mcp!)).toEqual({ mcpServers: { arrow402: { url: `${base}/mcp` } } });
  } finally {
    hostile.db.close();
  }
});
