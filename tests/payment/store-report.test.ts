/**
 * `arrow402 payments` over either store: the report (formatPaymentsReport) against a SQLite file
 * and a real PostgreSQL, and the command itself run as a subprocess with a config naming each.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LedgerConfig } from "../../src/config/types.ts";
import { formatPaymentsReport } from "../../src/payment/report.ts";
import type { PaymentStore } from "../../src/payment/store.ts";
import { runCli } from "../client/cli.ts";
import { tempDir } from "../support/fixtures.ts";
import { attempt, settle, settlement, storeBackends } from "./store-backends.ts";
import { EIGHTEEN, USDC_BASE_SEPOLIA } from "./fixtures.ts";

const backends = storeBackends();
const dir = tempDir("arrow402-report-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tokens = { [USDC_BASE_SEPOLIA.key]: USDC_BASE_SEPOLIA };
const at = (day: number) => new Date(Date.UTC(2026, 10, day, 12));

/** Two swaps and a metadata payment settled, one attempt unconfirmed, one in another token. */
async function seed(store: PaymentStore) {
  const a = attempt({ amount: 1000n, rows: 10 });
  const b = attempt({ amount: 2500n, rows: 25 });
  const meta = attempt({ amount: 7n, tableName: "blocks", query: null, rows: null, resourceUrl: "http://localhost:4021/api/table/blocks" });
  const dai = attempt({ amount: 10n ** 18n, asset: EIGHTEEN.address, network: EIGHTEEN.network });
  const pending = attempt({ amount: 3000n, attemptedAt: at(5) });
  await settle(store, a, at(1));
  await settle(store, b, at(2));
  await settle(store, meta, at(3));
  await settle(store, dai, at(4));
  await store.begin(pending);
  return { a, b, meta, dai, pending };
}

const nonceOf = (paymentKey: string) => paymentKey.split("|")[3]!;
const occurrences = (text: string, fragment: string) => text.split(fragment).length - 1;

describe.each(backends.map((backend) => [backend.name, backend] as const))("%s store", (_name, backend) => {
  test("settled payments once each, totals per table and token, unconfirmed attempts apart", async () => {
    const { open } = await backend.fresh();
    const store = await open();
    const { a, b, meta, dai, pending } = await seed(store);
    const report = await formatPaymentsReport(store, { tokens });

    expect(report).toContain("Settled payments (4):");
    expect(report).toContain(`${at(1).toISOString()}  swaps  10 rows  0.001 USDC on Base Sepolia`);
    expect(report).toContain(`${at(3).toISOString()}  blocks  metadata  0.000007 USDC on Base Sepolia`);
    expect(report).toContain(`${10n ** 18n} units of ${EIGHTEEN.address} on ${EIGHTEEN.network}`);
    for (const paid of [a, b, meta, dai]) expect(occurrences(report, paid.resourceUrl)).toBe(1);
    expect(report).toContain("swaps  0.0035 USDC on Base Sepolia  (2 payments)");
    expect(report).toContain("blocks  0.000007 USDC on Base Sepolia  (1 payment)");
    expect(report).toContain("Unconfirmed settlements (1)");
    expect(report).toContain(`nonce ${nonceOf(pending.paymentKey)}`);
    expect(report).toContain("0.003 USDC on eip155:84532");

    const since = await formatPaymentsReport(store, { since: at(3), tokens: { dai: EIGHTEEN, ...tokens } });
    expect(since).toContain(`Settled payments since ${at(3).toISOString()} (2):`);
    expect(since).toContain("swaps  1 DAI on Base  (1 payment)");
    expect(since).not.toContain(a.resourceUrl);
  });

  test("an attempt confirmed while the report reads is listed once, as settled", async () => {
    const { open } = await backend.fresh();
    const [store, replica] = [await open(), await open()];
    const racing = attempt({ amount: 1000n });
    await store.begin(racing);
    // Another replica confirms between the report's two reads.
    const reading: PaymentStore = {
      ...store,
      async unconfirmed() {
        const pending = await store.unconfirmed();
        await replica.confirm(racing.paymentKey, settlement({ settledAt: at(1) }));
        return pending;
      },
    };
    const report = await formatPaymentsReport(reading, { tokens });
    expect(report).toContain("Settled payments (1):");
    expect(report).not.toContain("Unconfirmed");
    expect(occurrences(report, racing.resourceUrl)).toBe(1);
  });

  test("an empty store says so, naming where it looked", async () => {
    const { open } = await backend.fresh();
    const store = await open();
    expect(await formatPaymentsReport(store, { tokens })).toBe(`No settled payments in ${store.location}.\n`);
  });

  test("`arrow402 payments` reads the store its config names", async () => {
    const { ledger, open } = await backend.fresh();
    const store = await open();
    const { a, pending } = await seed(store);
    // The URL comes from the environment, as a seller keeps a password out of the file.
    const configPath = writeConfig(ledger.url === undefined ? { path: ledger.path } : { url: "${LEDGER_URL}" });
    const env = ledger.url === undefined ? {} : { LEDGER_URL: ledger.url };

    const all = await runCli(["payments", "--config", configPath], env);
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    expect(all.stdoutText).toContain("Settled payments (4):");
    expect(occurrences(all.stdoutText, a.resourceUrl)).toBe(1);
    expect(all.stdoutText).toContain("swaps  0.0035 USDC on Base Sepolia  (2 payments)");
    expect(all.stdoutText).toContain(`Unconfirmed settlements (1)`);
    expect(all.stdoutText).toContain(`nonce ${nonceOf(pending.paymentKey)}`);

    const since = await runCli(["payments", "--config", configPath, "--since", at(4).toISOString()], env);
    expect(since.code).toBe(0);
    expect(since.stdoutText).toContain(`since ${at(4).toISOString()} (1):`);
    expect(since.stdoutText).not.toContain(a.resourceUrl);
  });
});

describe("`arrow402 payments` when there is nothing to read", () => {
  test("no SQLite ledger yet: says so, and creates none", async () => {
    const path = join(dir, "never-written.sqlite");
    const run = await runCli(["payments", "--config", writeConfig({ path })]);
    expect(run.code).toBe(0);
    expect(run.stdoutText).toBe(`No payments yet (no ledger at ${path}).\n`);
    expect(await Bun.file(path).exists()).toBe(false);
  });

  test("an unreachable PostgreSQL: exit 1 with one line naming the ledger, without its password", async () => {
    const run = await runCli(["payments", "--config", writeConfig({ url: "postgres://arrow402:${PW}@127.0.0.1:1/arrow402" })], { PW: "pa55-w0rd" });
    expect(run.code).toBe(1);
    expect(run.stderr).toStartWith("arrow402: cannot open the payment ledger at postgres://arrow402@127.0.0.1:1/arrow402: ");
    expect(run.stderr).toContain("check ledger.url");
    expect(run.stderr).not.toContain("pa55-w0rd");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});

let configs = 0;
function writeConfig(ledger: Partial<LedgerConfig>): string {
  configs += 1;
  const path = join(dir, `arrow402-${configs}.yaml`);
  const raw = { database: { sqlite: "./data.sqlite" }, ledger, tables: [{ name: "swaps" }, { name: "blocks" }] };
  writeFileSync(path, Bun.YAML.stringify(raw, null, 2));
  return path;
}
