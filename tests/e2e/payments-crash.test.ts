/**
 * Crash recovery with a real `arrow402 serve` process (ARCHITECTURE.md §6 "Crashes"): the server is
 * SIGKILLed while the facilitator holds its `/settle`, once after the transfer reached the chain and
 * once before, then started again with the same config (`rpc_urls` naming the devnet's anvil). The
 * buyer presents the very same PAYMENT-SIGNATURE again; `arrow402 payments --reconcile` resolves an
 * attempt whose buyer never comes back. Balances are read on chain, the ledger file directly.
 *
 * The servers wait up to 60 s for the facilitator (`facilitator.timeout_ms`), yet a dead server's
 * claim on the payment lasts one lease (src/payment/store/leases.ts CLAIM_LEASE_MS, 5 s; DESIGN §16):
 * the restarted server serves the buyer within seconds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getAddress } from "viem";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { CLAIM_LEASE_MS } from "../../src/payment/store/leases.ts";
import { decodePaymentSignature, paymentKey } from "../../src/payment/wire.ts";
import { claimExpired, claimExpiry, storedPayments, type StoredPayment } from "../support/ledger-rows.ts";
import { PRICES, SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl, type Payer } from "../support/paying.ts";
import { holdSettle, spawnServe, stopAllServers, writeServeConfig, type HeldSettlement, type ServeConfig, type ServerProcess } from "../support/serve-process.ts";

const FUNDS = 1_000_000n;
const PRICE = PRICES.flat.units;
const TX_HASH = /^0x[0-9a-f]{64}$/;
/** A facilitator timeout that once made a dead server's claim last minutes. */
const FACILITATOR_TIMEOUT_MS = 60_000;
/** How soon after the restart the buyer must be served (a lease, the start-up, the chain read, with room). */
const SERVED_WITHIN_MS = 10_000;
/** A cold server's first query can take over a second on a loaded machine; nothing here waits on this limit. */
const QUERY_TIMEOUT_MS = 10_000;

let sandbox: PaidSandbox;
const held: HeldSettlement[] = [];

/** One server, its buyer, and what the kill left. */
interface Scenario {
  config: ServeConfig;
  ledger: { path: string };
  server: ServerProcess;
  payer: Payer;
  sql: string;
  url: string;
  /** The PAYMENT-SIGNATURE the buyer sent in the killed request. */
  signature: string;
  key: string;
  /** The facilitator's reply to the settlement that happened before the kill (after-transfer only). */
  settled?: { success?: boolean; transaction?: string };
  /** The attempt as the kill left it. */
  attempt?: StoredPayment;
}

const scenarios: Record<"afterTransfer" | "beforeTransfer" | "reconcile", Scenario> = {} as never;

async function prepare(name: string, maxId: number): Promise<Scenario> {
  const dir = join(sandbox.dir, name);
  const config = await writeServeConfig({
    dir,
    devnet: sandbox.devnet,
    databasePath: sandbox.databasePath,
    facilitatorUrl: sandbox.proxy.url,
    facilitatorTimeoutMs: FACILITATOR_TIMEOUT_MS,
    queryTimeoutMs: QUERY_TIMEOUT_MS,
    ledger: { path: "./ledger.sqlite" },
  });
  const sql = `SELECT id, name, price FROM flat_items WHERE id <= ${maxId} ORDER BY id LIMIT 100`;
  return {
    config,
    ledger: { path: join(dir, "ledger.sqlite") },
    server: await spawnServe(config),
    payer: await newPayer(sandbox.devnet, FUNDS),
    sql,
    url: queryUrl(config.url, sql),
    signature: "",
    key: "",
  };
}

/**
 * The buyer pays; the proxy holds `/settle` (after or before the transfer); `whileHeld` runs then,
 * and the server is SIGKILLed.
 */
async function payAndKill(scenario: Scenario, when: "before-transfer" | "after-transfer", whileHeld?: () => Promise<void>): Promise<unknown> {
  const hold = holdSettle(sandbox.devnet.facilitatorUrl, when);
  held.push(hold);
  sandbox.resetProxy();
  sandbox.proxy.setBehaviour({ settle: hold.behaviour });
  const paying = scenario.payer.fetch(scenario.url).then(
    (response) => `answered ${response.status}`,
    (error: unknown) => error,
  );
  const reached = await Promise.race([hold.reached, Bun.sleep(20_000).then(() => "timeout" as const)]);
  if (reached === "timeout") throw new Error(`/settle was not reached (the buyer: ${String(await Promise.race([paying, Bun.sleep(1).then(() => "waiting")]))}): ${scenario.server.output()}`);
  scenario.settled = reached;
  scenario.signature = scenario.payer.signatures.at(-1)!;
  scenario.key = paymentKey(decodePaymentSignature(scenario.signature));
  await whileHeld?.();
  await scenario.server.kill();
  const outcome = await paying;
  sandbox.proxy.setBehaviour({});
  return outcome;
}

function present(scenario: Scenario, url = scenario.url): Promise<Response> {
  return fetch(url, { headers: { "PAYMENT-SIGNATURE": scenario.signature } });
}

/**
 * Presents the payment again until the answer is not "in use" (the dead server's claim), for at
 * most `limitMs`: the first other answer (or the last one), and when it came.
 */
async function presentUntilFree(scenario: Scenario, url = scenario.url, limitMs = 30_000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const response = await present(scenario, url);
    const inUse = response.status === 402 && (await response.clone().json()).error === PAYMENT_MESSAGES.inUse;
    if (!inUse || Date.now() > deadline) return { response, at: Date.now() };
    await Bun.sleep(200);
  }
}

function payments(config: ServeConfig, ...flags: string[]) {
  const cli = Bun.spawnSync(["bun", join(import.meta.dir, "../../src/main.ts"), "payments", "--config", config.path, ...flags], {
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: cli.exitCode, out: cli.stdout.toString(), err: cli.stderr.toString() };
}

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  const [afterTransfer, beforeTransfer, reconcile] = await Promise.all([prepare("after", 3), prepare("before", 4), prepare("reconcile", 5)]);
  Object.assign(scenarios, { afterTransfer, beforeTransfer, reconcile });
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  for (const hold of held) hold.release();
  await stopAllServers();
  await sandbox?.stop();
});

describe("killed after the transfer, while /settle is held", () => {
  test("no answer reached the buyer, the ledger keeps the settling attempt, the buyer paid once", async () => {
    const s = scenarios.afterTransfer;
    const outcome = await payAndKill(s, "after-transfer");
    expect(outcome).toBeInstanceOf(Error);
    // (Not toMatchObject with a matcher: Bun 1.4.5 writes the matcher into the received object.)
    expect(s.settled?.success).toBe(true);
    expect(s.settled?.transaction).toMatch(TX_HASH);
    expect(sandbox.proxy.counts.settle).toBe(1);
    const rows = await storedPayments(s.ledger);
    expect(rows).toEqual([expect.objectContaining({ status: "settling", payment_key: s.key, resource_url: s.url, query: s.sql, amount: PRICE.toString(), tx_hash: "" })]);
    s.attempt = rows[0];
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS - PRICE);
    expect(await sandbox.transfersIn(s.settled!.transaction as `0x${string}`)).toEqual([
      { from: s.payer.address, to: getAddress(sandbox.devnet.payTo), value: PRICE },
    ]);
  }, 30_000);

  test("started again with the same config at once: the same signed payment, presented until served, gets 200 with the data and the real transaction within seconds of the restart; no second transfer", async () => {
    const s = scenarios.afterTransfer;
    sandbox.resetProxy();
    const restartedAt = Date.now();
    s.server = await spawnServe(s.config);

    // The dead server's claim is a lease it no longer renews: "in use" for a few seconds at most.
    const { response, at } = await presentUntilFree(s);
    expect(response.status).toBe(200);
    expect(at - restartedAt).toBeLessThan(SERVED_WITHIN_MS);
    const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
    const { rows } = await arrowResult(response);
    expect(rows).toEqual(sandbox.sqliteRows(s.sql));
    expect(receipt).toEqual({ success: true, transaction: s.settled!.transaction, network: sandbox.devnet.network, payer: s.payer.address });
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS - PRICE);
    expect(await storedPayments(s.ledger)).toEqual([{ ...s.attempt!, status: "settled", tx_hash: s.settled!.transaction!, rows: 3 }]);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });

    // Settled now: served again as a replay, still without any charge or facilitator call.
    const again = await present(s);
    expect(again.status).toBe(200);
    expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE")).transaction).toBe(s.settled!.transaction);
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS - PRICE);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
  }, 45_000);
});

describe("killed before the transfer, while /settle is held", () => {
  test("the attempt is committed and nothing moved", async () => {
    const s = scenarios.beforeTransfer;
    const outcome = await payAndKill(s, "before-transfer");
    expect(outcome).toBeInstanceOf(Error);
    expect(await storedPayments(s.ledger)).toEqual([expect.objectContaining({ status: "settling", payment_key: s.key, resource_url: s.url, tx_hash: "" })]);
    s.attempt = (await storedPayments(s.ledger))[0];
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS);
  }, 30_000);

  test("started again: the same signed payment for another query is 402 once the dead server's claim has run out, the attempt unchanged; for its own query it is settled normally, once", async () => {
    const s = scenarios.beforeTransfer;
    sandbox.resetProxy();
    const restartedAt = Date.now();
    s.server = await spawnServe(s.config);

    const { response: other, at } = await presentUntilFree(s, queryUrl(s.config.url, "SELECT id, name, price FROM flat_items WHERE id <= 2 ORDER BY id LIMIT 100"));
    expect(other.status).toBe(402);
    expect((await other.json()).error).toBe(PAYMENT_MESSAGES.pendingElsewhere);
    expect(at - restartedAt).toBeLessThan(SERVED_WITHIN_MS);
    expect(await storedPayments(s.ledger)).toEqual([s.attempt!]);

    const response = await present(s);
    const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
    expect((await arrowResult(response)).rows).toEqual(sandbox.sqliteRows(s.sql));
    expect(receipt).toEqual({ success: true, transaction: expect.stringMatching(TX_HASH), network: sandbox.devnet.network, payer: s.payer.address });
    expect(await sandbox.transfersIn(receipt.transaction)).toEqual([{ from: s.payer.address, to: getAddress(sandbox.devnet.payTo), value: PRICE }]);
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS - PRICE);
    expect(sandbox.proxy.counts).toMatchObject({ settle: 1 });
    expect(await storedPayments(s.ledger)).toEqual([expect.objectContaining({ status: "settled", payment_key: s.key, tx_hash: receipt.transaction, rows: 4 })]);

    const again = await present(s);
    expect(again.status).toBe(200);
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS - PRICE);
    expect(sandbox.proxy.counts).toMatchObject({ settle: 1 });
  }, 45_000);
});

describe("no buyer coming back", () => {
  test("--reconcile while the server waits on /settle after the transfer: the claim is a lease of seconds, renewed; the attempt is left", async () => {
    const s = scenarios.reconcile;
    let early: ReturnType<typeof payments> | undefined;
    let expiresIn: number | null = null;
    const outcome = await payAndKill(s, "after-transfer", async () => {
      // The server has been waiting on /settle: its claim is still no longer than one lease ahead.
      const expiry = await claimExpiry(s.ledger, s.key);
      expiresIn = expiry === null ? null : expiry - Date.now();
      early = payments(s.config, "--reconcile");
    });
    expect(outcome).toBeInstanceOf(Error);
    expect(expiresIn).toBeGreaterThan(0);
    expect(expiresIn).toBeLessThanOrEqual(CLAIM_LEASE_MS);
    expect({ code: early?.code, err: early?.err }).toEqual({ code: 0, err: "" });
    expect(early?.out).toContain("LEFT  flat_items");
    expect(early?.out).toContain("a server holds this payment right now");
    expect(early?.out).toContain("0 confirmed settled, 0 removed, 1 left unconfirmed.");
    expect(await storedPayments(s.ledger)).toEqual([expect.objectContaining({ status: "settling", payment_key: s.key })]);
  }, 30_000);

  test("--reconcile, once the dead server's claim has run out (within a lease), confirms the attempt from the chain; payments lists it settled", async () => {
    const s = scenarios.reconcile;
    // Throws if the claim would last longer than a lease from now.
    await claimExpired(s.ledger, s.key, CLAIM_LEASE_MS + 250);
    const result = payments(s.config, "--reconcile");
    expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
    expect(result.out).toContain("CONFIRMED  flat_items  0.05 tUSDC on eip155:31337");
    expect(result.out).toContain(`used on chain in transaction ${s.settled!.transaction}`);
    expect(result.out).toContain("1 confirmed settled, 0 removed, 0 left unconfirmed.");
    expect(await storedPayments(s.ledger)).toEqual([expect.objectContaining({ status: "settled", payment_key: s.key, tx_hash: s.settled!.transaction, rows: null })]);
    expect(await sandbox.devnet.balanceOf(s.payer.address)).toBe(FUNDS - PRICE);

    const listed = payments(s.config);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain("Settled payments (1):");
    expect(listed.out).toContain(`tx ${s.settled!.transaction}`);
    expect(listed.out).not.toContain("Unconfirmed");

    const nothing = payments(s.config, "--reconcile");
    expect(nothing.code).toBe(0);
    expect(nothing.out).toContain("No unconfirmed settlements in");
  }, 45_000);
});
