/**
 * Item 5: paid queries through the devnet facilitator (anvil + test token + real x402 facilitator).
 * Fixed price: arrow402 against the x402 reference server (hono + @x402/hono on Bun, same
 * facilitator, same price, same body), after a warm-up, in pairs alternating which goes first.
 * Per row: how many passes over the table a per_row purchase makes, from the bytes the server
 * process reads (/proc/PID/io).
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDevnet } from "../devnet/index.ts";
import { BENCH_OUT, TABLE_SQL } from "./dataset.ts";
import { queryUrl } from "./arrow-client.ts";
import { createPayer, type Payer } from "./payer.ts";
import { bytesRead, spawnServer, type ChildServer } from "./processes.ts";
import { ms, runsOf, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";
import type { ReferenceSettings } from "./x402-reference-server.ts";

const FIXED_SQL = "SELECT id, block, ts, address, amount, nonce FROM fixed_transfers LIMIT 10";
const PER_ROW_SQL = TABLE_SQL.replace("transfers", "per_row_transfers");
const MAIN = join(import.meta.dir, "..", "src", "main.ts");
/** Untimed paid requests per server before timing (each pair takes ~30 ms). */
const WARMUP_PAIRS = 10;
/** Timed pairs at least: the medians of a few milliseconds' difference need more than 9 samples. */
const MIN_FIXED_PAIRS = 60;

export async function measurePayments(dbPath: string, rowCount: number, fixedRuns: number, perRowRuns: number): Promise<SectionResult> {
  const devnet = await startDevnet();
  const dir = join(BENCH_OUT, "payments");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const servers: ChildServer[] = [];
  try {
    const { key, ...token } = devnet.tokenConfig();
    const tag = (fields: object) => ({ pay_to: devnet.payTo, token: key, ...fields });
    const config = {
      server: { bind: "127.0.0.1:0" },
      facilitator: { url: devnet.facilitatorUrl },
      database: { sqlite: dbPath },
      ledger: { path: join(dir, "ledger.sqlite") },
      tokens: { [key]: { ...token, symbol: "tUSDC" } },
      tables: [
        { name: "fixed_transfers", price_tags: [tag({ type: "fixed", amount: "0.01" })] },
        { name: "per_row_transfers", price_tags: [tag({ type: "per_row", amount_per_item: "0.000001" })] },
      ],
    };
    const configPath = join(dir, "arrow402.yaml");
    writeFileSync(configPath, Bun.YAML.stringify(config, null, 2));
    const ours = await spawnServer(["bun", MAIN, "serve", "--config", configPath, "--bind", "127.0.0.1:0"], / on (http:\/\/\S+)/);
    servers.push(ours);
    const payer = createPayer(devnet.payer.privateKey);

    // arrow402's own answer fixes the reference server's price and body.
    const fixedUrl = queryUrl(ours.url, FIXED_SQL);
    const first = await payer.pay(fixedUrl);
    const offer = first.required.accepts[0]!;
    const bodyFile = join(dir, "fixed-body.arrow");
    writeFileSync(bodyFile, first.body);
    const settings: ReferenceSettings = {
      facilitatorUrl: devnet.facilitatorUrl,
      network: offer.network,
      payTo: offer.payTo,
      amount: offer.amount,
      asset: offer.asset,
      extra: offer.extra as ReferenceSettings["extra"],
      bodyFile,
      maxTimeoutSeconds: offer.maxTimeoutSeconds,
    };
    const settingsFile = join(dir, "reference.json");
    writeFileSync(settingsFile, JSON.stringify(settings));
    const reference = await spawnServer(["bun", join(import.meta.dir, "x402-reference-server.ts"), settingsFile], /reference server on (http:\/\/\S+)/);
    servers.push(reference);
    const referenceUrl = `${reference.url}/api/query?query=${encodeURIComponent(FIXED_SQL)}`;
    const warm = await payer.pay(referenceUrl);
    if (Buffer.compare(warm.body, first.body) !== 0) throw new Error("the reference server returned another body");

    // Steady state, compared fairly: both servers first serve the same number of untimed paid
    // requests (JIT warm-up; one cold request each would weigh on a 9-run median), then the pairs
    // alternate which server goes first, so neither always follows the other's settlement.
    for (let i = 0; i < WARMUP_PAIRS; i++) {
      await payer.pay(referenceUrl);
      await payer.pay(fixedUrl);
    }
    const oursMs: number[] = [];
    const referenceMs: number[] = [];
    for (let run = 0; run < Math.max(fixedRuns, MIN_FIXED_PAIRS); run++) {
      const order = run % 2 === 0 ? [referenceUrl, fixedUrl] : [fixedUrl, referenceUrl];
      for (const url of order) (url === fixedUrl ? oursMs : referenceMs).push((await payer.pay(url)).paidMs);
    }
    const perRow = await measurePerRow(ours, payer, dbPath, rowCount, perRowRuns);
    const fixed = median(oursMs);
    const base = median(referenceMs);
    return {
      checks: [
        { item: "5", figure: "fixed-price paid query, median latency", measured: ms(fixed), baseline: `@x402/hono reference ${ms(base)}`, ratio: fixed / base, target: "≤ 1.00×", pass: fixed / base <= 1 },
        perRow.check,
      ],
      details: [
        { item: "5", name: `arrow402 paid request runs (${FIXED_SQL})`, value: runsOf(oursMs, ms) },
        { item: "5", name: "reference paid request runs (same body, price, facilitator)", value: runsOf(referenceMs, ms) },
        { item: "5", name: "paid body", value: `${first.body.byteLength} bytes, ${offer.amount} units of ${offer.asset} on ${offer.network}` },
        ...perRow.details,
      ],
    };
  } finally {
    for (const server of servers) await server.stop();
    await devnet.stop();
  }
}

/**
 * A per_row purchase is a 402 quote (priced from a count) and the paid request (priced from the
 * rows it returns). A count and a scan each read the whole table once, so the bytes the server
 * reads divided by the database file's size is the number of passes; target: at most 2.
 */
async function measurePerRow(server: ChildServer, payer: Payer, dbPath: string, rowCount: number, runs: number) {
  const url = queryUrl(server.url, PER_ROW_SQL);
  const fileSize = statSync(dbPath).size;
  const quotePasses: number[] = [];
  const paidPasses: number[] = [];
  const paidMs: number[] = [];
  const quoteMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const before = bytesRead(server.pid);
    let afterQuote = NaN;
    const read = await payer.pay(url, () => (afterQuote = bytesRead(server.pid)));
    const after = bytesRead(server.pid);
    if (read.required.accepts[0]!.amount !== String(rowCount)) throw new Error(`unexpected per_row price ${read.required.accepts[0]!.amount}`);
    quotePasses.push((afterQuote - before) / fileSize);
    paidPasses.push((after - afterQuote) / fileSize);
    paidMs.push(read.paidMs);
    quoteMs.push(read.quoteMs);
  }
  const total = median(quotePasses.map((q, i) => q + paidPasses[i]!));
  const passes = (v: number) => v.toFixed(2);
  return {
    check: {
      item: "5",
      figure: `per_row paid query (${rowCount} rows): table passes, quote + paid request`,
      measured: `${passes(total)} passes`,
      baseline: "count + scan = 2 passes",
      ratio: total / 2,
      target: "≤ 1 count + 1 scan",
      pass: Math.round(total) <= 2,
    },
    details: [
      { item: "5", name: "per_row passes: 402 quote runs", value: runsOf(quotePasses, passes) },
      { item: "5", name: "per_row passes: paid request runs", value: runsOf(paidPasses, passes) },
      { item: "5", name: "per_row latency: 402 quote / paid request (median)", value: `${ms(median(quoteMs))} / ${ms(median(paidMs))}` },
      { item: "5", name: "database file (one pass)", value: `${fileSize} bytes` },
    ],
  };
}
