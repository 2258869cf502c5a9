import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { CHECKOUT_BUNDLE } from "../../src/checkout/bundle.ts";
import { generateDashboards } from "../../src/dashboards/generate.ts";
import { ConfigError } from "../../src/errors.ts";
import { PAY_TO, SWAP_COLUMNS, setupDashboards, withEngines, type DashboardsSetup } from "./support.ts";

const DEX = { slug: "dex", title: "DEX activity", description: "Swaps per hour", tags: ["DeFi", "Base"], table: "swaps" };
const CHAIN = { slug: "chain", title: "Blocks", description: "Block hashes", tags: ["L2"], table: "blocks" };
const HIDDEN = { slug: "hidden", title: "Hidden one", description: "Not yet", tags: [], table: "blocks", enabled: false };

function generate(setup: DashboardsSetup, extra: { slug?: string; force?: boolean; snapshotRows?: number } = {}) {
  const lines: string[] = [];
  const run = withEngines(setup.config, (engines) => generateDashboards({ config: setup.config, engines, catalog: setup.catalog, log: (l) => lines.push(l), ...extra }));
  return run.then((result) => ({ ...result, lines }));
}

const read = (path: string) => readFileSync(path, "utf8");

describe("landing page", () => {
  test("lists every enabled dashboard and every table with its price in human units", async () => {
    const setup = setupDashboards([DEX, CHAIN, HIDDEN]);
    const result = await generate(setup);
    const landing = join(setup.root, "index.html");
    expect(result.written).toContain(landing);
    const html = read(landing);
    expect(html).toStartWith("<!doctype html>");
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    for (const entry of [DEX, CHAIN]) {
      expect(html).toContain(`<a href="/${entry.slug}/">${entry.title}</a>`);
      expect(html).toContain(entry.description);
      for (const tag of entry.tags) expect(html).toContain(`<li>${tag}</li>`);
    }
    expect(html).not.toContain("Hidden one");
    expect(html).not.toContain("/hidden/");
    expect(html).toContain("0.002 USDC per row on Base Sepolia");
    expect(html).toContain("1.00 USDC per query on Base");
    expect(html).toMatch(/<code>blocks<\/code><\/th><td>Block hashes<\/td><td><ul><li>Free queries<\/li><\/ul>/);
    // Self-contained: no stylesheet, font or script from anywhere.
    expect(html).not.toMatch(/<link[^>]+stylesheet|<script|https?:\/\/(?!data\.example)/);
  });

  test("is rewritten on every run, even when all dashboards exist", async () => {
    const setup = setupDashboards([DEX]);
    await generate(setup);
    writeFileSync(join(setup.root, "index.html"), "stale");
    const again = await generate(setup);
    expect(again.skipped).toEqual([join(setup.root, "dex")]);
    expect(read(join(setup.root, "index.html"))).toContain("DEX activity");
  });
});

describe("scaffolded dashboard", () => {
  test("writes the page, the stylesheet, the bundled script and the snapshot", async () => {
    const setup = setupDashboards([DEX]);
    const result = await generate(setup);
    const folder = join(setup.root, "dex");
    expect(result.written).toEqual([folder, join(setup.root, "index.html")]);
    expect(readdirSync(folder).sort()).toEqual(["checkout.js", "dashboard.js", "index.html", "snapshot.arrow", "style.css"]);
    expect(readdirSync(setup.root).sort()).toEqual(["dex", "index.html"]);

    const html = read(join(folder, "index.html"));
    expect(html).toContain('<script type="module" src="/dex/dashboard.js"></script>');
    expect(html).toContain('<script type="module" src="/dex/checkout.js"></script>');
    expect(read(join(folder, "checkout.js"))).toBe(CHECKOUT_BUNDLE);
    // "Buy here": the SQL prefilled in the checkout's text area, the formats to choose from.
    expect(html).toContain('<textarea id="checkout-sql" name="sql" rows="3" spellcheck="false" autocomplete="off" autocapitalize="off">SELECT * FROM swaps ORDER BY ts DESC LIMIT 100</textarea>');
    expect(html).toContain('<option value="arrow" selected>Apache Arrow IPC stream</option>');
    expect(html).toContain('<link rel="stylesheet" href="/dex/style.css">');
    expect(html).toContain("<h1>DEX activity</h1>");
    // Schema: column, Arrow type, SQLite type, nullable, description.
    expect(html).toContain("<tr><th scope=\"row\"><code>ts</code></th><td><code>Timestamp&lt;MILLISECOND, UTC&gt;</code></td><td><code>TIMESTAMP</code></td><td>no</td>");
    expect(html).toContain("<tr><th scope=\"row\"><code>amount_usd</code></th><td><code>Float64</code></td><td><code>REAL</code></td><td>yes</td><td>Swap size in US dollars</td></tr>");
    // The "get the full data" panel.
    expect(html).toContain("0.002 USDC per row on Base Sepolia");
    expect(html).toContain("arrow402 query &#39;http://data.example:4021&#39; &#39;SELECT * FROM swaps ORDER BY ts DESC LIMIT 100&#39;");
    expect(html).toContain("--format parquet --output &#39;swaps.parquet&#39;");
    expect(html).toContain("curl -sS --compressed -G &#39;http://data.example:4021/api/query&#39;");
    expect(html).toContain("-H &#39;Accept: text/csv&#39;");
    expect(html).toContain("&quot;url&quot;: &quot;http://data.example:4021/mcp&quot;");
    const plan = JSON.parse(/<script type="application\/json" id="dashboard-plan">(.*?)<\/script>/s.exec(html)?.[1] ?? "null");
    expect(plan.snapshotUrl).toBe("/dex/snapshot.arrow");
    expect(plan.charts.map((c: { kind: string }) => c.kind)).toEqual(["time", "time", "histogram", "histogram", "bar"]);
    // The described dollar amount is the measure; the INTEGER PRIMARY KEY never is.
    expect(plan.charts[1]).toMatchObject({ x: "ts", y: "amount_usd", reduce: "sum" });
    expect(plan.charts.map((c: { x?: string; y?: string }) => c.y ?? c.x)).not.toContain("id");
    expect(plan.rowsPerSampleRow).toBe(1);

    const script = read(join(folder, "dashboard.js"));
    expect(script.length).toBeGreaterThan(10_000);
    // One self-contained file: nothing left to resolve from node_modules or a CDN.
    expect(script).not.toMatch(/\bfrom\s*["'](?:apache-arrow|@observablehq\/plot|d3)/);
    expect(script).not.toMatch(/\bimport\s*\(\s*["']/);
    expect(read(join(folder, "style.css"))).toContain("prefers-color-scheme: dark");
  });

  test("snapshot.arrow decodes to the table's columns: an even sample of at most the cap, most recent first", async () => {
    const setup = setupDashboards([DEX]);
    await generate(setup, { snapshotRows: 300 });
    const bytes = readFileSync(join(setup.root, "dex", "snapshot.arrow"));
    const table = tableFromIPC(bytes);
    expect(table.schema.fields.map((f) => f.name)).toEqual(SWAP_COLUMNS);
    expect(table.schema.fields.map((f) => String(f.type))).toEqual(["Int64", "Timestamp<MILLISECOND, UTC>", "Utf8", "Float64", "Int64", "Utf8"]);
    expect(table.numRows).toBe(300);
    const newest = setup.db.query<{ id: number; ts: string; pair: string }, []>("SELECT id, ts, pair FROM swaps ORDER BY ts DESC LIMIT 1").get();
    const first = table.get(0)?.toJSON();
    expect(first?.id).toBe(BigInt(newest!.id));
    expect(first?.ts).toBe(Date.parse(newest!.ts));
    expect(first?.pair).toBe(newest!.pair);
    const html = read(join(setup.root, "dex", "index.html"));
    const last = table.get(299)?.toJSON();
    const oldest = setup.db.query<{ id: number }, []>("SELECT id FROM swaps ORDER BY ts LIMIT 1").get();
    expect(last?.id).toBe(BigInt(oldest!.id));
    expect(html).toContain("300 rows sampled evenly from 1,200 along <code>ts</code>, 2026-01-01 → 2026-01-06");
    expect(html).toContain("each sampled row stands for about 4 rows");
    expect(html).toContain("The 100 most recent rows of the snapshot, by <code>ts</code>.");
    const plan = JSON.parse(/<script type="application\/json" id="dashboard-plan">(.*?)<\/script>/s.exec(html)?.[1] ?? "null");
    expect(plan.rowsPerSampleRow).toBe(4);
    expect(html).toContain("The charts above are drawn from a sample.");
  });

  test("the default cap keeps a small table whole", async () => {
    const setup = setupDashboards([CHAIN]);
    await generate(setup);
    const table = tableFromIPC(readFileSync(join(setup.root, "chain", "snapshot.arrow")));
    expect(table.numRows).toBe(10);
    expect(table.schema.fields.map((f) => f.name)).toEqual(["number", "hash"]);
    const html = read(join(setup.root, "chain", "index.html"));
    expect(html).toContain("All 10 rows, taken");
    expect(html).not.toContain("estimate");
    expect(html).toContain("The charts above are drawn from a snapshot taken when this page was generated.");
  });
});

describe("existing dashboards", () => {
  test("are never overwritten without force", async () => {
    const setup = setupDashboards([DEX]);
    await generate(setup);
    const page = join(setup.root, "dex", "index.html");
    writeFileSync(page, "my hand-edited dashboard");
    const result = await generate(setup);
    expect(result.skipped).toEqual([join(setup.root, "dex")]);
    expect(result.backups).toEqual([]);
    expect(result.written).toEqual([join(setup.root, "index.html")]);
    expect(result.lines.join("\n")).toContain("--force");
    expect(read(page)).toBe("my hand-edited dashboard");
  });

  test("with force are moved to a backup first, and the backup is reported", async () => {
    const setup = setupDashboards([DEX]);
    await generate(setup);
    writeFileSync(join(setup.root, "dex", "index.html"), "my hand-edited dashboard");
    const first = await generate(setup, { force: true });
    expect(first.backups).toHaveLength(1);
    const backup = first.backups[0]!;
    expect(backup).toMatch(new RegExp(`^${setup.root}/dex\\.bak-\\d{8}T\\d{6}Z(-\\d+)?$`));
    expect(read(join(backup, "index.html"))).toBe("my hand-edited dashboard");
    expect(read(join(setup.root, "dex", "index.html"))).toContain("<h1>DEX activity</h1>");
    expect(first.lines.some((l) => l.includes(backup))).toBe(true);
    // A second forced run in the same second keeps both backups apart.
    const second = await generate(setup, { force: true });
    expect(second.backups).toHaveLength(1);
    expect(second.backups[0]).not.toBe(backup);
    expect(existsSync(backup)).toBe(true);
  });
});

describe("SLUG", () => {
  test("limits generation to that dashboard; the landing page still lists all enabled ones", async () => {
    const setup = setupDashboards([DEX, CHAIN]);
    const result = await generate(setup, { slug: "chain" });
    expect(result.written).toEqual([join(setup.root, "chain"), join(setup.root, "index.html")]);
    expect(existsSync(join(setup.root, "dex"))).toBe(false);
    expect(read(join(setup.root, "index.html"))).toContain('<a href="/dex/">DEX activity</a>');
  });

  test("can scaffold a disabled dashboard on request", async () => {
    const setup = setupDashboards([DEX, HIDDEN]);
    const result = await generate(setup, { slug: "hidden" });
    expect(result.written).toContain(join(setup.root, "hidden"));
    expect(result.lines.join("\n")).toContain("disabled");
    expect(read(join(setup.root, "index.html"))).not.toContain("Hidden one");
  });

  test("an unknown slug is a config error naming the configured ones", async () => {
    const setup = setupDashboards([DEX, CHAIN]);
    const error = await generate(setup, { slug: "nope" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join("\n")).toContain("dex, chain");
    expect(existsSync(join(setup.root, "index.html"))).toBe(false);
  });
});

test("without a dashboards section generation is a config error", async () => {
  const setup = setupDashboards([DEX]);
  const { dashboards: _, ...config } = setup.config;
  const error = await withEngines(setup.config, (engines) => generateDashboards({ config, engines, catalog: setup.catalog })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
});

test("everything from the config and the data is HTML-escaped", async () => {
  const evil = "<script>alert('x')</script>";
  const setup = setupDashboards(
    [{ slug: "odd", title: `${evil} & "title"`, description: `<img src=x onerror=alert(1)>`, tags: ["<b>tag</b>"], table: "odd<table>" }],
    {
      tables: [
        {
          name: "odd<table>",
          description: `<iframe src="x">`,
          columns: { "</script><b>col": "</script><script>alert(2)</script>" },
          price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.5" }],
        },
      ],
    },
  );
  await generate(setup);
  for (const file of [join(setup.root, "index.html"), join(setup.root, "odd", "index.html")]) {
    const html = read(file);
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain("<iframe");
    expect(html).not.toContain("<b>");
    expect(html).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;title&quot;");
    // Only the page's own script elements (the plan, the checkout's setup and the two bundles) exist.
    expect(html.match(/<script/g)?.length ?? 0).toBe(file.endsWith("odd/index.html") ? 4 : 0);
  }
  const page = read(join(setup.root, "odd", "index.html"));
  expect(page).toContain("<code>&lt;/script&gt;&lt;b&gt;col</code>");
  expect(page).toContain("0.50 USDC per row on Base Sepolia");
  // The plan JSON cannot close its script element, and still parses to the real names.
  const json = /<script type="application\/json" id="dashboard-plan">(.*?)<\/script>/s.exec(page)?.[1] ?? "";
  expect(json).not.toContain("</");
  expect(JSON.parse(json).columns.map((c: { name: string }) => c.name)).toEqual(["</script><b>col", "it's"]);
});

test("a snapshot holding every row of a paid table is pointed out; a sample of it, or a free table, is not", async () => {
  const setup = setupDashboards([DEX, CHAIN]);
  const whole = await generate(setup);
  const notes = (lines: string[]) => lines.filter((line) => line.startsWith("note:"));
  // swaps (paid, 1,200 rows) fits the snapshot whole; blocks is free.
  expect(notes(whole.lines)).toEqual([expect.stringContaining("every row of 'swaps' (1200), whose queries are paid")]);
  expect(notes(whole.lines)[0]).toContain("/dex/snapshot.arrow");
  const sampled = await generate(setup, { force: true, snapshotRows: 100 });
  expect(notes(sampled.lines)).toEqual([]);
});
