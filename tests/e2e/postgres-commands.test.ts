/**
 * The operator's commands on a config with a SQLite and a PostgreSQL source (DESIGN.md §14
 * "Everything else is engine-neutral"), run as the real command line (`bun src/main.ts …`) against a
 * real PostgreSQL:
 * - `arrow402 dashboards` samples the PostgreSQL table through its engine; the real server serves
 *   the page, whose snapshot.arrow holds the values exactly (Int16, Int32, Float32, Decimal128,
 *   Timestamp(µs) with and without "UTC", List), charted as planned for the new kinds, and the
 *   page loads them in headless Chromium (ARROW402_SKIP_BROWSER=1 skips that part);
 * - `arrow402 validate` connects to both sources and reads every value through each engine: OK
 *   (exit 0) when all fit, every misfit of both engines listed with its config path, column and
 *   row otherwise (exit 2), an unreachable source named without its URL's password (exit 2).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { tableFromIPC, type Decimal, type Vector } from "apache-arrow";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { loadConfigFile } from "../../src/config/load.ts";
import { decimalText, unscaledAt } from "../../src/formats/decimal.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createMarketDatabase } from "../dashboards/support.ts";
import { tempDir } from "../support/fixtures.ts";
import { usePostgres } from "../support/postgres.ts";

const ROOT = join(import.meta.dir, "../..");
const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "test-artifacts");
const TRADES = 600;

const pg = usePostgres();
let admin: SQL;
let dir: string;

/** The command line, as an operator runs it, in the config's folder. */
function cli(...args: string[]): { code: number; stdout: string; stderr: string } {
  const run = Bun.spawnSync(["bun", join(ROOT, "src/main.ts"), ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

function writeConfig(file: string, warehouseUrl: string): string {
  const config = {
    server: { bind: "127.0.0.1:0" },
    databases: { local: { sqlite: "./market.sqlite" }, warehouse: { postgres: warehouseUrl } },
    tables: [
      { name: "swaps", database: "local", description: "DEX swaps" },
      { name: "trades", database: "warehouse", description: "Trades", columns: { price: "Price in USD" } },
    ],
    dashboards: {
      root: "./dashboards",
      entries: [
        { slug: "dex", title: "DEX activity", table: "swaps" },
        { slug: "trades", title: "Trades", description: "Trades from the warehouse", table: "trades" },
      ],
    },
  };
  writeFileSync(join(dir, file), Bun.YAML.stringify(config, null, 2));
  return file;
}

beforeAll(async () => {
  admin = new SQL(pg.url);
  // Times rise with id, each a µs past the minute; prices are exact to 4 places; tier repeats (a category).
  await admin.unsafe(`
    CREATE TABLE trades (
      id int8 PRIMARY KEY, at timestamptz NOT NULL, local timestamp, qty int4, tier int2, price numeric(12,4),
      ratio real, tags text[], pair text NOT NULL, day date
    );
    INSERT INTO trades SELECT g,
      timestamptz '2026-01-01 00:00:00+00' + g * interval '10 minutes' + g * interval '1 microsecond',
      timestamp '2026-01-01 00:00:00' + g * interval '10 minutes',
      (g * 7919) % 1000, (g % 3)::int2, ((g * 7919) % 1000000) / 100.0 + 0.0001, (g % 7) / 4.0,
      ARRAY['t' || (g % 3), NULL], (ARRAY['ETH/USDC', 'WBTC/USDC', 'ARB/ETH'])[g % 3 + 1], date '2026-01-01' + g / 144
    FROM generate_series(1, ${TRADES}) g;
  `);
  dir = tempDir("arrow402-pg-commands-");
  createMarketDatabase(join(dir, "market.sqlite"));
  writeConfig("arrow402.yaml", pg.url);
}, 60_000);

afterAll(async () => {
  await admin?.close();
});

describe("arrow402 dashboards", () => {
  let server: RunningServer;
  let browser: Browser | undefined;

  beforeAll(async () => {
    const run = cli("dashboards", "--config", "arrow402.yaml");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`(${TRADES} of ${TRADES} rows of 'trades', `);
    expect(run.stdout).toContain("(1200 of 1200 rows of 'swaps', ");
    server = await startServer(loadConfigFile(join(dir, "arrow402.yaml")), { workers: 1 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("the page names the PostgreSQL types and plans charts for the new kinds", async () => {
    const response = await fetch(`${server.url}/trades/`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<th scope="col">PostgreSQL type</th>');
    expect(html).toContain("<tr><th scope=\"row\"><code>price</code></th><td><code>Decimal[12e+4]</code></td><td><code>numeric(12,4)</code></td><td>yes</td><td>Price in USD</td></tr>");
    expect(html).toContain(`All ${TRADES} rows, 2026-01-01 → 2026-01-05, taken`);
    expect(html).toContain("The 100 most recent rows of the snapshot, by <code>at</code>.");
    const plan = JSON.parse(/<script type="application\/json" id="dashboard-plan">(.*?)<\/script>/s.exec(html)?.[1] ?? "null");
    // The µs timestamp is the time column; the decimal, the described measure, is charted as a mean (a price averages).
    expect(plan.charts[0]).toMatchObject({ kind: "time", x: "at", y: null, reduce: "count" });
    expect(plan.charts[1]).toMatchObject({ kind: "time", x: "at", y: "price", reduce: "mean" });
    expect(plan.charts).toContainEqual(expect.objectContaining({ kind: "histogram", x: "price" }));
    // A few-valued Int16 is a category; a list is never charted.
    expect(plan.charts).toContainEqual(expect.objectContaining({ kind: "bar", y: "tier" }));
    expect(JSON.stringify(plan.charts)).not.toContain("tags");
  });

  test("snapshot.arrow, as the server serves it, holds every value exactly, most recent first", async () => {
    const response = await fetch(`${server.url}/trades/snapshot.arrow`);
    expect(response.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(table.schema.fields.map((f) => `${f.name} ${f.type}`)).toEqual([
      "id Int64",
      "at Timestamp<MICROSECOND, UTC>",
      "local Timestamp<MICROSECOND>",
      "qty Int32",
      "tier Int16",
      "price Decimal[12e+4]",
      "ratio Float32",
      "tags List<Utf8>",
      "pair Utf8",
      "day Date32<DAY>",
    ]);
    expect(table.numRows).toBe(TRADES);
    const expected = (await admin.unsafe(`
      SELECT id::text, (extract(epoch FROM at) * 1000000)::int8::text AS at, (extract(epoch FROM local) * 1000000)::int8::text AS local,
             qty, tier, price::text, ratio::float8 AS ratio, tags, pair, (day - date '1970-01-01') AS day
      FROM trades ORDER BY at DESC`)) as Record<string, unknown>[];
    const column = (name: string) => table.getChild(name)!;
    const raw = (name: string) => column(name).data[0]!.values as BigInt64Array;
    const actual = expected.map((_, i) => ({
      id: String(column("id").get(i)),
      at: String(raw("at")[i]),
      local: String(raw("local")[i]),
      qty: column("qty").get(i),
      tier: column("tier").get(i),
      price: decimalText(unscaledAt(column("price") as Vector<Decimal>, i), 4),
      ratio: column("ratio").get(i),
      tags: [...column("tags").get(i)!],
      pair: column("pair").get(i),
      day: column("day").get(i) / 86_400_000,
    }));
    expect(actual as Record<string, unknown>[]).toEqual(expected);
    expect(actual[0]).toMatchObject({ id: "600", at: String(Date.UTC(2026, 0, 5, 4) * 1000 + 600) });
  });

  test("the dashboard of the SQLite source beside it is served too", async () => {
    const table = tableFromIPC(new Uint8Array(await (await fetch(`${server.url}/dex/snapshot.arrow`)).arrayBuffer()));
    expect(table.numRows).toBe(1200);
    expect(String(table.schema.fields[1]!.type)).toBe("Timestamp<MILLISECOND, UTC>");
  });

  test.skipIf(process.env.ARROW402_SKIP_BROWSER === "1")("the page loads the snapshot in Chromium: exact decimals and µs in the preview, the charts drawn", async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set ARROW402_SKIP_BROWSER=1`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (message) => void (message.type() === "error" && problems.push(message.text())));
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(`${server.url}/trades/`);
    await page.waitForSelector("#preview tbody tr");
    await page.waitForFunction(() => (document.getElementById("status") as HTMLElement | null)?.hidden === true);
    const first = await page.locator("#preview tbody tr").first().locator("td").allInnerTexts();
    const [row] = (await admin.unsafe(`SELECT price::text AS price, qty FROM trades WHERE id = 600`)) as { price: string; qty: number }[];
    expect(first).toEqual(["600", "2026-01-05 04:00:00.000600Z", "2026-01-05 04:00:00", String(row!.qty), "0", row!.price, "1.25", '["t0", null]', "ETH/USDC", "2026-01-05"]);
    const figures = page.locator("figure.chart");
    expect(await figures.count()).toBeGreaterThanOrEqual(4);
    for (let i = 0; i < (await figures.count()); i++) {
      expect(await figures.nth(i).locator('svg g[aria-label="rect"] rect, svg g[aria-label="bar"] rect').count()).toBeGreaterThan(0);
    }
    // Sorting by the decimal column orders by its exact value.
    const header = page.locator("#preview thead th").nth(5);
    await header.locator("button").click();
    const prices = await page.locator("#preview tbody tr td:nth-child(6)").allInnerTexts();
    const lowest = (await admin.unsafe(`SELECT price::text AS price FROM trades ORDER BY trades.price LIMIT 100`)) as { price: string }[];
    expect(prices).toEqual(lowest.map((r) => r.price));
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "dashboards-postgres.png"), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);
});

describe("arrow402 validate", () => {
  test("reads every value of both sources: OK when all fit", () => {
    const run = cli("validate", "--config", "arrow402.yaml");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`arrow402.yaml: OK — 2 table(s), ${1200 + TRADES} row(s) scanned, every value fits its column's type\n`);
  });

  test("lists each engine's misfits with config path, column and row, and exits 2; a dashboard of the table then names it", async () => {
    await admin.unsafe(`INSERT INTO trades (id, at, pair, price) VALUES (601, 'infinity', 'X/Y', 1), (602, '2026-02-01 00:00:00+00', 'X/Y', 'NaN')`);
    const market = new Database(join(dir, "market.sqlite"));
    market.run("UPDATE swaps SET fee_units = 'many' WHERE id = 5");
    market.close();
    try {
      const run = cli("validate", "--config", "arrow402.yaml");
      expect(run.code).toBe(2);
      const problems = run.stderr.split("\n").filter((line) => line.startsWith("  "));
      expect(problems).toEqual([
        "  tables[0] (swaps).fee_units: rowid 5: text 'many' is not an integer (declared INTEGER); fix the value or the column's declared type",
        expect.stringMatching(
          /^ {2}tables\[1\] \(trades\)\.at: row 601 \(ctid '\(\d+,\d+\)'\): timestamp 'infinity' is no point in time a timestamp column holds \(declared timestamp with time zone\); fix the value or the column's declared type$/,
        ),
        expect.stringMatching(
          /^ {2}tables\[1\] \(trades\)\.price: row 602 \(ctid '\(\d+,\d+\)'\): numeric NaN is not a number Decimal128\(12, 4\) can hold \(declared numeric\(12,4\)\); fix the value or the column's declared type$/,
        ),
      ]);
      const dashboards = cli("dashboards", "--config", "arrow402.yaml", "--force", "trades");
      expect(dashboards.code).toBe(1);
      expect(dashboards.stderr).toContain("Value in table 'trades', column 'at' does not fit its declared type");
      expect(dashboards.stderr).toContain("run 'arrow402 validate'");
    } finally {
      await admin.unsafe("DELETE FROM trades WHERE id > 600");
      const fixed = new Database(join(dir, "market.sqlite"));
      fixed.run("UPDATE swaps SET fee_units = 5 WHERE id = 5");
      fixed.close();
    }
  });

  test("an unreachable source is one problem naming it, never its password; exit 2", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const closedPort = probe.port!;
    await probe.stop(true);
    const config = writeConfig("unreachable.yaml", `postgres://reader:s3cret-pw@127.0.0.1:${closedPort}/market`);
    for (const command of ["validate", "dashboards"]) {
      const run = cli(command, "--config", config);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("the PostgreSQL source 'warehouse' does not answer");
      expect(run.stdout + run.stderr).not.toContain("s3cret-pw");
    }
    const run = cli("validate", "--config", config);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("  "))).toEqual([
      expect.stringMatching(/^ {2}databases\.warehouse\.postgres: the PostgreSQL source 'warehouse' does not answer \(.*\): check databases\.warehouse\.postgres and that the server is running and reachable$/),
    ]);
  });
});
