/**
 * Buying in the browser (ARCHITECTURE.md §15) in a real headless Chromium, against the real server,
 * the real x402 facilitator and the devnet chain: a dashboard's "Buy here" quotes the SQL, connects
 * the injected test wallet (tests/support/browser-wallet.ts: its key stays outside the page),
 * switches it to the offer's chain, has it sign the EIP-3009 authorization and downloads the file.
 * The file must be the rows, the buyer's and the seller's balances must move by exactly the quote,
 * once; every refusal must be said in words and move nothing. Screenshots of the checkout go to
 * /tmp/checkout-quote.png and /tmp/checkout-receipt.png. Needs /usr/bin/chromium;
 * ARROW402_SKIP_BROWSER=1 skips this file on machines without it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { chromium, type Browser, type Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { dashboards } from "../../src/cli/dashboards.ts";
import { paymentRequiredResponse } from "../../src/routes/x402-headers.ts";
import { addCorsHeaders } from "../../src/routes/cors.ts";
import { injectWallet, type TestWallet } from "../support/browser-wallet.ts";
import { SANDBOX_START_TIMEOUT_MS, startPaidSandbox, TOKEN_KEY, type PaidSandbox, type PaidServer, type ServeOptions } from "../support/paid-server.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync"];
const skip = process.env.ARROW402_SKIP_BROWSER === "1";
// A browser start, a page load and a settlement on a busy machine; these bound a hang, nothing more.
const TIMEOUT = 90_000;

/** 40 trades at 0.001 tUSDC a row: the dashboard's query costs 0.04 tUSDC (40,000 smallest units). */
const TRADES = 40;
const PER_ROW = { config: "0.001", units: 1000n };
const SQL = "SELECT * FROM trades LIMIT 100";

function createTrades(path: string): void {
  const db = new Database(path);
  db.run("CREATE TABLE trades (id INTEGER PRIMARY KEY, pair TEXT NOT NULL, amount REAL NOT NULL)");
  const insert = db.prepare("INSERT INTO trades VALUES (?1, ?2, ?3)");
  for (let i = 1; i <= TRADES; i++) insert.run(i, ["ETH/USDC", "WBTC/USDC", "OP/USDC"][i % 3]!, i * 12.5);
  db.run("CREATE VIEW trade_book AS SELECT * FROM trades");
  db.close();
}

describe.skipIf(skip)("buying on a dashboard with the wallet in the browser", () => {
  let sandbox: PaidSandbox;
  let server: PaidServer;
  let browser: Browser;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set ARROW402_SKIP_BROWSER=1 to skip the browser tests`);
    }
    sandbox = await startPaidSandbox();
    createTrades(sandbox.databasePath);
    const options: ServeOptions = {
      tables: [
        {
          name: "trades",
          description: "Trades",
          price_tags: [
            { type: "per_row", pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, amount_per_item: PER_ROW.config },
          ],
        },
        { name: "kinds", description: "Free" },
        // The same rows with their description sold (no dashboard may show such a table).
        {
          name: "trade_book",
          description: "Trades, description sold",
          price_tags: [
            { type: "per_row", pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, amount_per_item: PER_ROW.config },
            { type: "metadata_price", pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, amount: "0.01" },
          ],
        },
      ],
      dashboards: { root: "./dashboards", entries: [{ slug: "trades", title: "Trades", table: "trades" }] },
      // Several refusals in a row from one address are this file's purpose, not an attack.
      limits: { max_refused_payments_per_minute: 0 },
    };
    // As an operator does: `arrow402 dashboards` with the config, then `arrow402 serve`.
    const { configPath } = await sandbox.writeConfig(options);
    expect(await dashboards(configPath, undefined, false)).toBe(0);
    server = await sandbox.serve(options);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  }, SANDBOX_START_TIMEOUT_MS + TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  async function open(path: string, key?: Hex): Promise<{ page: Page; wallet: TestWallet | null }> {
    problems.length = 0;
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1, acceptDownloads: true });
    const page = await context.newPage();
    const wallet = key === undefined ? null : await injectWallet(page, key);
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith("blob:")) problems.push(`request to another origin: ${request.url()}`);
    });
    await page.goto(server.url + path);
    return { page, wallet };
  }

  async function newBuyer(balance: bigint): Promise<Hex> {
    const key = generatePrivateKey();
    if (balance > 0n) await sandbox.devnet.fund(privateKeyToAccount(key).address, balance);
    return key;
  }

  async function balances(buyer: Hex): Promise<{ buyer: bigint; seller: bigint }> {
    return { buyer: await sandbox.devnet.balanceOf(buyer), seller: await sandbox.devnet.balanceOf(sandbox.devnet.payTo) };
  }

  async function quote(page: Page): Promise<void> {
    await page.getByRole("button", { name: "Get a quote" }).click();
    await page.locator("#checkout-offer .checkout-price").first().waitFor();
  }

  async function message(page: Page, pattern: RegExp): Promise<string> {
    const locator = page.locator("#checkout-message", { hasText: pattern });
    await locator.waitFor({ timeout: 30_000 }).catch(async () => {
      throw new Error(`the checkout did not say ${pattern}; it says: ${await page.locator("#checkout-message").innerText()}`);
    });
    return locator.innerText();
  }

  test("the quote shows the price in token units, the rows, the network and the recipient", async () => {
    const { page } = await open("/trades/", await newBuyer(0n));
    expect(await page.getByLabel("SQL").inputValue()).toBe(SQL);
    expect(await page.getByLabel("Format").inputValue()).toBe("arrow");
    expect(await page.getByRole("button", { name: "Pay and download" }).isDisabled()).toBe(true);
    await quote(page);
    const offer = await page.locator("#checkout-offer").innerText();
    expect(offer).toContain(`${TRADES} rows`);
    expect(offer).toContain(`0.04 tUSDC on devnet, paid to ${sandbox.devnet.payTo}`);
    expect(await page.getByRole("button", { name: "Pay and download" }).isDisabled()).toBe(false);
    await page.locator("#checkout").screenshot({ path: "/tmp/checkout-quote.png" });
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("Pay and download: the wallet switches chain and signs, the file is the rows, the balances move by the quote, once", async () => {
    const key = await newBuyer(1_000_000n);
    const { page, wallet } = await open("/trades/", key);
    const before = await balances(wallet!.address);
    const ledgerBefore = server.ledgerRows().length;
    await quote(page);
    await page.getByRole("button", { name: "Connect wallet" }).click();
    await page.locator("#checkout-wallet", { hasText: wallet!.address.toLowerCase() }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("trades.arrow");
    const bytes = readFileSync((await download.path())!);
    const table = tableFromIPC(new Uint8Array(bytes));
    expect(table.toArray().map((row) => ({ ...row.toJSON() }))).toEqual(sandbox.sqliteRows(SQL));
    await message(page, /^Paid and saved trades\.arrow\. To buy again, get a new quote\.$/);
    // A quote buys once: the button waits for a new quote.
    expect(await page.getByRole("button", { name: "Pay and download" }).isDisabled()).toBe(true);

    // The receipt: the whole transaction hash as text, the one the ledger recorded, one transfer of the quote.
    const hash = (await page.locator("#checkout-receipt .checkout-tx").innerText()).trim();
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    const rows = server.ledgerRows().slice(ledgerBefore);
    expect(rows.map((row) => [row.tx_hash, row.amount, row.rows, row.payer.toLowerCase()])).toEqual([[hash, "40000", TRADES, wallet!.address.toLowerCase()]]);
    expect(await sandbox.transfersIn(hash as Hex)).toEqual([{ from: wallet!.address, to: sandbox.devnet.payTo, value: 40_000n }]);
    const after = await balances(wallet!.address);
    expect([before.buyer - after.buyer, after.seller - before.seller]).toEqual([40_000n, 40_000n]);
    expect(await page.locator("#checkout-receipt").innerText()).toContain(`0.04 tUSDC on devnet to ${sandbox.devnet.payTo}`);

    // The wallet was asked to switch to the devnet and signed one EIP-3009 authorization of the quote.
    expect(wallet!.calls).toContain("wallet_switchEthereumChain");
    expect(wallet!.chainId).toBe(31337);
    expect(wallet!.signed.map((s) => [s.primaryType, s.message.value, s.message.to])).toEqual([["TransferWithAuthorization", "40000", sandbox.devnet.payTo]]);
    await page.locator("#checkout").screenshot({ path: "/tmp/checkout-receipt.png" });
    // On a phone, in dark mode, the receipt's long hash and addresses wrap: nothing is wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll("#checkout *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth).map((e) => `${e.tagName}.${e.className}#${e.id}: ${Math.round(e.getBoundingClientRect().right)}`),
    );
    expect(wide).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await page.locator("#checkout").screenshot({ path: "/tmp/checkout-receipt-phone-dark.png" });
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  const refusals: [string, (wallet: TestWallet) => void, RegExp][] = [
    ["the buyer rejects the signature", (w) => w.refuse.add("eth_signTypedData_v4"), /^You declined the signature in your wallet: nothing was signed\. Nothing was charged\./],
    ["the buyer refuses to switch chain", (w) => w.refuse.add("wallet_switchEthereumChain"), /^Your wallet did not switch to devnet \(chain 31337\), where this offer is paid: nothing was signed\. Nothing was charged\./],
    ["the buyer refuses to connect", (w) => w.refuse.add("eth_requestAccounts"), /^You declined to connect your wallet\. Nothing was charged\./],
    ["the wallet does not know the chain", (w) => w.failWith.set("wallet_switchEthereumChain", 4902), /^Your wallet does not know devnet \(chain 31337\): add that network to your wallet, then press Pay and download again\. Nothing was charged\./],
  ];

  test.each(refusals)("%s: said in words, nothing sent to the facilitator, nothing moves", async (_name, refuse, words) => {
    const key = await newBuyer(1_000_000n);
    const { page, wallet } = await open("/trades/", key);
    refuse(wallet!);
    const before = await balances(wallet!.address);
    const ledgerBefore = server.ledgerRows().length;
    sandbox.resetProxy();
    await quote(page);
    await page.getByRole("button", { name: "Pay and download" }).click();
    await message(page, words);
    expect(sandbox.proxy.counts.verify + sandbox.proxy.counts.settle).toBe(0);
    expect(await balances(wallet!.address)).toEqual(before);
    expect(server.ledgerRows().length).toBe(ledgerBefore);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("with two wallets in the browser, the buyer picks the one that pays", async () => {
    const first = await newBuyer(1_000_000n);
    const second = await newBuyer(1_000_000n);
    const { page, wallet: one } = await open("/trades/", first);
    const two = await injectWallet(page, second, "Second Wallet");
    await page.reload();
    const choice = page.getByLabel("Wallet", { exact: true });
    await choice.waitFor();
    expect(await choice.locator("option").allInnerTexts()).toEqual(["Test Wallet", "Second Wallet"]);
    await choice.selectOption({ label: "Second Wallet" });
    const before = await balances(two.address);
    await quote(page);
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("trades.arrow");
    expect(await page.locator("#checkout-wallet").innerText()).toContain(`Second Wallet: ${two.address.toLowerCase()}`);
    expect(before.buyer - (await balances(two.address)).buyer).toBe(40_000n);
    expect([one!.signed.length, two.signed.length]).toEqual([0, 1]);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("a wallet that only sets window.ethereum (no EIP-6963) pays too", async () => {
    const key = await newBuyer(1_000_000n);
    problems.length = 0;
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const wallet = await injectWallet(page, key, "Old Wallet", false);
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${server.url}/trades/`);
    await quote(page);
    await page.getByRole("button", { name: "Connect wallet" }).click();
    await page.locator("#checkout-wallet", { hasText: `Connected with your browser's wallet: ${wallet.address.toLowerCase()}` }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("trades.arrow");
    expect(wallet.signed.length).toBe(1);
    await context.close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("no wallet in the browser: a line says what to install", async () => {
    const { page } = await open("/trades/");
    await page.locator("#checkout-wallet", { hasText: /^No wallet was found in this browser\. Install a wallet extension/ }).waitFor();
    await quote(page);
    await page.getByRole("button", { name: "Pay and download" }).click();
    expect(await message(page, /No wallet was found/)).toContain("hold tUSDC on devnet in it");
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("too little balance: said in words, nothing moves", async () => {
    const key = await newBuyer(1_000n);
    const { page, wallet } = await open("/trades/", key);
    const before = await balances(wallet!.address);
    const ledgerBefore = server.ledgerRows().length;
    await quote(page);
    await page.getByRole("button", { name: "Pay and download" }).click();
    await message(page, new RegExp(`^Your wallet ${wallet!.address.toLowerCase()} holds too little tUSDC on devnet to pay 0\\.04 tUSDC\\. Nothing was charged\\.`));
    expect(wallet!.signed.length).toBe(1);
    expect(await balances(wallet!.address)).toEqual(before);
    expect(server.ledgerRows().length).toBe(ledgerBefore);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("the facilitator refuses the payment: its reason in words, nothing moves", async () => {
    const key = await newBuyer(1_000_000n);
    const { page, wallet } = await open("/trades/", key);
    const before = await balances(wallet!.address);
    sandbox.resetProxy();
    sandbox.proxy.setBehaviour({ verify: { kind: "reject", invalidReason: "invalid_exact_evm_payload_signature" } });
    try {
      await quote(page);
      await page.getByRole("button", { name: "Pay and download" }).click();
      await message(page, /^The payment was refused\. Nothing was charged\. The payment was not verified \(invalid_exact_evm_payload_signature\)/);
      expect(sandbox.proxy.counts.settle).toBe(0);
      expect(await balances(wallet!.address)).toEqual(before);
    } finally {
      sandbox.resetProxy();
    }
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("the SQL is editable: a free query downloads without a wallet, an edit after the quote asks for a new one, a bad query is the server's words", async () => {
    const { page } = await open("/trades/");
    const sql = page.getByLabel("SQL");
    await sql.fill("SELECT id, label FROM kinds ORDER BY id");
    await page.getByRole("button", { name: "Get a quote" }).click();
    await page.locator("#checkout-offer", { hasText: /Free: this request needs no payment/ }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("kinds.arrow");
    const table = tableFromIPC(new Uint8Array(readFileSync((await download.path())!)));
    expect(table.toArray().map((row) => ({ ...row.toJSON() }))).toEqual(sandbox.sqliteRows("SELECT id, label FROM kinds ORDER BY id"));
    // The free answer was fetched as Arrow: another format needs fetching again.
    await page.getByLabel("Format").selectOption("csv");
    await page.getByRole("button", { name: "Pay and download" }).click();
    await message(page, /^The format changed since this free answer was fetched/);
    await page.getByRole("button", { name: "Get a quote" }).click();
    const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(csv.suggestedFilename()).toBe("kinds.csv");
    expect(readFileSync((await csv.path())!, "utf8").split(/\r?\n/)[0]).toBe("id,label");

    await sql.fill(SQL);
    await quote(page);
    await sql.fill("SELECT id FROM trades LIMIT 5");
    await message(page, /^The SQL changed since the quote: press Get a quote for its price\.$/);
    await page.getByRole("button", { name: "Pay and download" }).click();
    await message(page, /^The SQL changed since the quote/);

    await sql.fill("SELECT nope FROM trades");
    await page.getByRole("button", { name: "Get a quote" }).click();
    expect(await message(page, /^No quote: the server answered 400: /)).toContain("nope");
    expect(await page.getByRole("button", { name: "Pay and download" }).isDisabled()).toBe(true);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  const PAYWALL_SQL = "SELECT id, pair FROM trades WHERE id <= 25 ORDER BY id";
  const paywallUrl = () => `${server.url}/api/query?query=${encodeURIComponent(PAYWALL_SQL)}`;

  test("a browser navigating to a paid query gets the paywall page, PAYMENT-REQUIRED set, and buys there", async () => {
    const key = await newBuyer(1_000_000n);
    const { page, wallet } = await open("/", key);
    const before = await balances(wallet!.address);
    const navigation = await page.goto(paywallUrl());
    expect(navigation!.status()).toBe(402);
    expect(navigation!.headers()["content-type"]).toBe("text/html; charset=utf-8");
    const json = await fetch(paywallUrl());
    expect(navigation!.headers()["payment-required"]).toBe(json.headers.get("payment-required")!);
    expect(await page.locator("h1").innerText()).toBe("Payment required");
    expect(await page.getByLabel("SQL").inputValue()).toBe(PAYWALL_SQL);
    // The page is the 402: its offers are shown as the quote at once.
    expect(await page.locator("#checkout-offer").innerText()).toContain("0.025 tUSDC on devnet");
    expect(await page.locator("#checkout-offer").innerText()).toContain("25 rows");
    await quote(page);
    expect(await page.locator("#checkout-offer").innerText()).toContain("0.025 tUSDC on devnet");
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("trades.arrow");
    const table = tableFromIPC(new Uint8Array(readFileSync((await download.path())!)));
    expect(table.toArray().map((row) => ({ ...row.toJSON() }))).toEqual(sandbox.sqliteRows(PAYWALL_SQL));
    const after = await balances(wallet!.address);
    expect([before.buyer - after.buyer, after.seller - before.seller]).toEqual([25_000n, 25_000n]);
    await page.screenshot({ path: "/tmp/checkout-paywall.png", fullPage: true });
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  test("a browser navigating to a paid table description gets the paywall page and buys the JSON there", async () => {
    const key = await newBuyer(1_000_000n);
    const { page, wallet } = await open("/", key);
    const before = await balances(wallet!.address);
    const navigation = await page.goto(`${server.url}/api/table/trade_book`);
    expect(navigation!.status()).toBe(402);
    expect(navigation!.headers()["payment-required"]).toBeDefined();
    expect(await page.getByRole("textbox", { name: "SQL" }).count()).toBe(0);
    await quote(page);
    expect(await page.locator("#checkout-offer").innerText()).toContain("0.01 tUSDC on devnet");
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("trade_book-table.json");
    const document = JSON.parse(readFileSync((await download.path())!, "utf8"));
    expect(document.table_name).toBe("trade_book");
    expect(document.schema.fields.map((f: { name: string }) => f.name)).toEqual(["id", "pair", "amount"]);
    const after = await balances(wallet!.address);
    expect(before.buyer - after.buyer).toBe(10_000n);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);

  const BROWSERS: [string, string][] = [
    ["Chrome", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"],
    ["Firefox", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"],
    ["Safari", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"],
  ];
  test.each(BROWSERS)("%s's navigation Accept gets the HTML 402 with the same PAYMENT-REQUIRED", async (_name, accept) => {
    const reference = await fetch(paywallUrl());
    const response = await fetch(paywallUrl(), { headers: { accept } });
    expect(response.status).toBe(402);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("payment-required")).toBe(reference.headers.get("payment-required"));
    expect(response.headers.get("cache-control")).toBe(reference.headers.get("cache-control"));
    expect(await response.text()).toContain('<button type="button" id="checkout-pay" disabled>Pay and download</button>');
  });

  const OTHER_CLIENTS: [string, string | undefined][] = [
    ["no Accept", undefined],
    ["*/*", "*/*"],
    ["JSON", "application/json"],
    ["Arrow", "application/vnd.apache.arrow.stream"],
    ["CSV", "text/csv"],
    ["JSON before HTML", "application/json, text/html"],
    ["HTML weighed below the rest", "*/*, text/html;q=0.9"],
  ];
  test.each(OTHER_CLIENTS)("%s: the JSON 402, byte for byte", async (_name, accept) => {
    const response = await fetch(paywallUrl(), accept === undefined ? {} : { headers: { accept } });
    expect(response.status).toBe(402);
    const header = response.headers.get("payment-required")!;
    // What the JSON 402 has always been (routes/x402-headers.ts): the header's JSON as the body, and its headers.
    const expected = paymentRequiredResponse(JSON.parse(Buffer.from(header, "base64").toString("utf8")));
    addCorsHeaders(expected.headers, server.config.server.corsOrigins, null);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(new Uint8Array(await expected.arrayBuffer()));
    const own = (r: Response) => [...r.headers.entries()].filter(([name]) => !["date", "content-length"].includes(name));
    expect(own(response)).toEqual(own(expected));
  });

  test("the paywall page escapes the SQL it shows: its only scripts are the setup and the bundle", async () => {
    const evil = `SELECT pair FROM trades WHERE pair <> '</script><script>alert(1)</script><!--'`;
    const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent(evil)}`, { headers: { accept: BROWSERS[0]![1] } });
    if (response.status !== 402) throw new Error(`expected 402, got ${response.status}: ${await response.text()}`);
    const html = await response.text();
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<!--");
    expect(html.match(/<script/g)).toEqual(["<script", "<script"]);
    expect(html).toContain("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--");
  });

  test("the server serves the checkout bundle for its paywall pages", async () => {
    const response = await fetch(`${server.url}/api/checkout.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await response.text()).toBe(readFileSync(join(sandbox.dir, "dashboards", "trades", "checkout.js"), "utf8"));
  });

  // Last: it adds a row to the table.
  test("the price changed since the quote: nothing is charged, the new quote is shown, and paying it buys the new rows", async () => {
    const key = await newBuyer(1_000_000n);
    const { page, wallet } = await open("/trades/", key);
    await page.getByLabel("Format").selectOption("csv");
    await quote(page);
    const writer = new Database(sandbox.databasePath);
    writer.run("INSERT INTO trades VALUES (?1, 'ETH/USDC', 1.25)", [TRADES + 1]);
    writer.close();
    const before = await balances(wallet!.address);
    await page.getByRole("button", { name: "Pay and download" }).click();
    await message(page, /^The price changed since your quote \(it was 0\.04 tUSDC; it is now 0\.041 tUSDC for 41 rows\), so the payment was not taken\. Nothing was charged\./);
    expect(await balances(wallet!.address)).toEqual(before);
    expect(await page.locator("#checkout-offer").innerText()).toContain("41 rows");

    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.getByRole("button", { name: "Pay and download" }).click()]);
    expect(download.suggestedFilename()).toBe("trades.csv");
    const csv = readFileSync((await download.path())!, "utf8").trim().split(/\r?\n/);
    expect(csv.length).toBe(1 + TRADES + 1);
    const after = await balances(wallet!.address);
    expect(before.buyer - after.buyer).toBe(41_000n);
    await page.context().close();
    expect(problems).toEqual([]);
  }, TIMEOUT);
});
