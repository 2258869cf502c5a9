/**
 * The generated dashboards in a real headless Chromium: the landing page lists the dashboard,
 * the dashboard draws its charts from snapshot.arrow with the bundled Plot and apache-arrow,
 * the preview sorts on click, nothing is fetched from another origin and nothing logs an error.
 * Screenshots go to test-artifacts/. Needs /usr/bin/chromium (apt-get install -y chromium);
 * ARROW402_SKIP_BROWSER=1 skips this file on machines without it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { chromium, type Browser, type Page } from "playwright-core";
import { generateDashboards } from "../../src/dashboards/generate.ts";
import { dashboardRoutes } from "../../src/routes/dashboards.ts";
import { listen, setupDashboards, withEngines } from "../dashboards/support.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync"];
const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts");
const skip = process.env.ARROW402_SKIP_BROWSER === "1";
// A browser start and a page load can be slow on a busy CI machine; these bound a hang, nothing more.
const TIMEOUT = 60_000;

describe.skipIf(skip)("dashboards in a browser", () => {
  let browser: Browser;
  let server: ReturnType<typeof listen>;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set ARROW402_SKIP_BROWSER=1 to skip the browser tests`);
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    const setup = setupDashboards([
      { slug: "dex", title: "DEX activity", description: "Swaps per hour on the test market", tags: ["DeFi", "Base"], table: "swaps" },
      { slug: "chain", title: "Blocks", description: "Block hashes", tags: [], table: "blocks" },
    ]);
    await withEngines(setup.config, (engines) => generateDashboards({ config: setup.config, engines, catalog: setup.catalog }));
    setup.db.close();
    server = listen(new Elysia().use(dashboardRoutes(setup.config.dashboards)));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  }, TIMEOUT);

  beforeEach(() => {
    problems.length = 0;
  });

  afterAll(async () => {
    await browser?.close();
    server?.stop();
  });

  async function open(path: string, options: { dark?: boolean; phone?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({
      colorScheme: options.dark ? "dark" : "light",
      viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
      deviceScaleFactor: 1,
    });
    const page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`${path}: console error: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`${path}: page error: ${error.message}`));
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url)) problems.push(`${path}: request to another origin: ${request.url()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${path}: ${response.status()} for ${response.url()}`);
    });
    await page.goto(server.url + path);
    return page;
  }

  async function waitForDashboard(page: Page): Promise<void> {
    await page.waitForSelector("#preview tbody tr");
    await page.waitForFunction(() => (document.getElementById("status") as HTMLElement | null)?.hidden === true);
  }

  test("the landing page lists the dashboards and the priced tables", async () => {
    const page = await open("/");
    expect(await page.locator("h1").innerText()).toBe("Data dashboards");
    expect(await page.locator('a[href="/dex/"]').innerText()).toBe("DEX activity");
    expect(await page.locator('a[href="/chain/"]').innerText()).toBe("Blocks");
    const prices = await page.locator("#tables-heading + .table-scroll").innerText();
    expect(prices).toContain("0.002 USDC per row on Base Sepolia");
    expect(prices).toContain("1.00 USDC per query on Base");
    await page.screenshot({ path: join(ARTIFACTS, "dashboards-landing.png"), fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(ARTIFACTS, "dashboards-landing-dark.png"), fullPage: true });
    await page.locator('a[href="/dex/"]').click();
    await waitForDashboard(page);
    expect(await page.locator("h1").innerText()).toBe("DEX activity");
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("a dashboard draws its charts from the snapshot", async () => {
    const page = await open("/dex/");
    await waitForDashboard(page);
    const figures = page.locator("figure.chart");
    const count = await figures.count();
    expect(count).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < count; i++) {
      const svg = figures.nth(i).locator("svg[aria-label]").first();
      expect(await svg.getAttribute("aria-label")).toBeTruthy();
      const marks = await figures.nth(i).locator('svg g[aria-label="rect"] rect, svg g[aria-label="bar"] rect').count();
      expect(marks).toBeGreaterThan(0);
      expect(await figures.nth(i).locator(".detail").innerText()).not.toBe("");
    }
    // The time charts are binned as planned: 1,200 swaps 7 minutes apart span about 6 days.
    const plan = await page.evaluate(() => JSON.parse(document.getElementById("dashboard-plan")?.textContent ?? "null"));
    expect(plan.charts[0]).toMatchObject({ kind: "time", interval: "3 hours" });
    expect(await page.locator("figure.chart .detail").first().innerText()).toContain("per 3 hours");
    expect(await figures.nth(1).locator("figcaption strong").innerText()).toBe("Sum of amount_usd per 3 hours");
    await page.screenshot({ path: join(ARTIFACTS, "dashboards-dex.png"), fullPage: true });
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("the preview table sorts on click", async () => {
    const page = await open("/dex");
    await waitForDashboard(page);
    expect(await page.locator("#preview tbody tr").count()).toBe(100);
    const headers = await page.locator("#preview thead th").allInnerTexts();
    const column = headers.findIndex((h) => h.includes("amount_usd"));
    expect(column).toBeGreaterThanOrEqual(0);
    const header = page.locator("#preview thead th").nth(column);
    const cells = () => page.locator(`#preview tbody tr td:nth-child(${column + 1})`).allInnerTexts();
    const numbers = (texts: string[]) => texts.filter((t) => t !== "null").map(Number);

    await header.locator("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("ascending");
    const ascending = numbers(await cells());
    expect(ascending.length).toBeGreaterThan(0);
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));

    await header.locator("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    const descending = numbers(await cells());
    expect(descending).toEqual([...descending].sort((a, b) => b - a));
    expect(descending[0]).toBeGreaterThan(ascending[0]!);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("the full-data panel shows the commands, the formats and the MCP snippet as text to copy", async () => {
    const page = await open("/dex/");
    await waitForDashboard(page);
    const panel = page.locator("section.full-data");
    expect(await panel.locator("h2").innerText()).toBe("Get the full data");
    const blocks = await panel.locator("pre code").allInnerTexts();
    expect(blocks[0]).toContain("--format parquet --output 'swaps.parquet'");
    expect(blocks.some((block) => block.includes("--compressed") && block.includes("-H 'Accept: text/csv'"))).toBe(true);
    expect(await panel.locator("table.formats tbody tr").count()).toBe(5);
    expect(JSON.parse(blocks.at(-1)!)).toEqual({ mcpServers: { arrow402: { url: "http://data.example:4021/mcp" } } });
    await panel.screenshot({ path: join(ARTIFACTS, "dashboards-full-data.png") });
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("reads well in dark mode and on a phone", async () => {
    const dark = await open("/dex/", { dark: true });
    await waitForDashboard(dark);
    const background = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).not.toBe("rgb(255, 255, 255)");
    await dark.screenshot({ path: join(ARTIFACTS, "dashboards-dex-dark.png"), fullPage: true });
    await dark.context().close();

    const phone = await open("/dex/", { phone: true });
    await waitForDashboard(phone);
    // Nothing but the scrollable tables may be wider than the screen.
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: join(ARTIFACTS, "dashboards-dex-phone.png"), fullPage: true });
    await phone.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);
});
