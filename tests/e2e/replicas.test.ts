/**
 * Two replicas sharing their payment state through PostgreSQL (ARCHITECTURE.md §11 "Replicas"): two real
 * `arrow402 serve` processes, each over its own copy of the data file, `ledger.url` naming one real
 * PostgreSQL, one public `base_url` (as behind a load balancer), the devnet's facilitator and the
 * real x402 client. One payment is settled once whichever replica sees it; a replica killed in the
 * middle of a payment loses nothing; PostgreSQL going away refuses payments without charging and
 * coming back needs no restart. Balances are read on chain, the ledger in PostgreSQL directly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getAddress } from "viem";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { CLAIM_LEASE_MS } from "../../src/payment/store/leases.ts";
import { decodePaymentSignature, paymentKey } from "../../src/payment/wire.ts";
import { claimExpired, storedPayments } from "../support/ledger-rows.ts";
import { PRICES, SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";
import { usePostgres } from "../support/postgres.ts";
import { holdSettle, spawnServe, stopAllServers, writeServeConfig, type HeldSettlement, type ServeConfig, type ServerProcess } from "../support/serve-process.ts";

const FUNDS = 1_000_000n;
const PRICE = PRICES.flat.units;
const PUBLIC_URL = "http://data.replicas.test";
const TX_HASH = /^0x[0-9a-f]{64}$/;
const ROOT = join(import.meta.dir, "../..");

const postgres = usePostgres();
let sandbox: PaidSandbox;
const held: HeldSettlement[] = [];

interface Replica {
  config: ServeConfig;
  server: ServerProcess;
}
let a: Replica;
let b: Replica;

const sqlFor = (maxId: number) => `SELECT id, name, price FROM flat_items WHERE id <= ${maxId} ORDER BY id LIMIT 100`;
/** The query's URL on one replica (the resource itself is named by PUBLIC_URL). */
const on = (replica: Replica, sql: string) => queryUrl(replica.server.url, sql);

async function startReplica(name: string): Promise<Replica> {
  const config = await writeServeConfig({
    dir: join(sandbox.dir, name),
    devnet: sandbox.devnet,
    databasePath: sandbox.databasePath,
    facilitatorUrl: sandbox.proxy.url,
    ledger: { url: postgres.url },
    baseUrl: PUBLIC_URL,
  });
  return { config, server: await spawnServe(config) };
}

/** A payment signed for the query's current offer, as a PAYMENT-SIGNATURE header. */
async function signedFor(replica: Replica, sql: string) {
  const payer = await newPayer(sandbox.devnet, FUNDS);
  const header = encodePayment(await payer.sign(await paymentRequired(on(replica, sql))));
  return { payer, header, key: paymentKey(decodePaymentSignature(header)) };
}

function present(url: string, header: string): Promise<Response> {
  return fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
}

async function rowsFor(key: string) {
  return (await storedPayments({ url: postgres.url })).filter((row) => row.payment_key === key);
}

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  [a, b] = await Promise.all([startReplica("replica-a"), startReplica("replica-b")]);
}, SANDBOX_START_TIMEOUT_MS);

afterAll(async () => {
  for (const hold of held) hold.release();
  await stopAllServers();
  await sandbox?.stop();
});

describe("one payment, two replicas", () => {
  test("the same signature sent to both at once, several times each: one transfer, one ledger row; every answer is 402 (in use, or served again max_replays times already) or 200 with the same receipt", async () => {
    sandbox.resetProxy();
    const sql = sqlFor(6);
    const { payer, header, key } = await signedFor(a, sql);
    // Eight requests, alternating replicas, a few milliseconds apart: some overlap the settlement, some come after it.
    const responses = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        await Bun.sleep(i * 40);
        const response = await present(on(i % 2 === 0 ? a : b, sql), header);
        return { status: response.status, receipt: response.headers.get("PAYMENT-RESPONSE"), body: new Uint8Array(await response.arrayBuffer()) };
      }),
    );
    const paid = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(paid.length + refused.length).toBe(responses.length);
    expect(paid.length).toBeGreaterThanOrEqual(1);
    // Replays are counted in the shared ledger: the replicas together serve it again at most 3 times.
    expect(paid.length).toBeLessThanOrEqual(1 + 3);
    for (const r of refused) expect([PAYMENT_MESSAGES.inUse, PAYMENT_MESSAGES.replaysExhausted(3)]).toContain(JSON.parse(new TextDecoder().decode(r.body)).error);
    const receipts = new Set(paid.map((r) => r.receipt));
    expect(receipts.size).toBe(1);
    const receipt = decodeHeader(paid[0]!.receipt);
    expect(receipt).toEqual({ success: true, transaction: expect.stringMatching(TX_HASH), network: sandbox.devnet.network, payer: payer.address });
    for (const r of paid) {
      const { rows } = await arrowResult(new Response(r.body, { headers: { "content-type": "application/vnd.apache.arrow.stream" } }));
      expect(rows).toEqual(sandbox.sqliteRows(sql));
    }
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);
    expect(await sandbox.transfersIn(receipt.transaction)).toEqual([{ from: payer.address, to: getAddress(sandbox.devnet.payTo), value: PRICE }]);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
    expect(await rowsFor(key)).toEqual([expect.objectContaining({ status: "settled", tx_hash: receipt.transaction, resource_url: queryUrl(PUBLIC_URL, sql) })]);
  });

  test("settled on one replica, presented again on the other: served for the same query without a new charge, 402 for another", async () => {
    const sql = sqlFor(7);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    sandbox.resetProxy();
    const first = await payer.fetch(on(a, sql));
    expect(first.status).toBe(200);
    const { transaction } = decodeHeader(first.headers.get("PAYMENT-RESPONSE"));
    const header = payer.signatures.at(-1)!;
    sandbox.resetProxy();

    const again = await present(on(b, sql), header);
    expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toEqual({ success: true, transaction, network: sandbox.devnet.network, payer: payer.address });
    expect((await arrowResult(again)).rows).toEqual(sandbox.sqliteRows(sql));

    const other = await present(on(b, sqlFor(2)), header);
    expect(other.status).toBe(402);
    expect((await other.json()).error).toBe(PAYMENT_MESSAGES.otherResource);

    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await rowsFor(paymentKey(decodePaymentSignature(header)))).toEqual([expect.objectContaining({ status: "settled", tx_hash: transaction })]);
  });

  test("arrow402 payments with either replica's config lists each settlement once", async () => {
    const settled = (await storedPayments({ url: postgres.url })).filter((row) => row.status === "settled");
    expect(settled.length).toBe(2);
    const outputs = [a, b].map((replica) => {
      const cli = Bun.spawnSync(["bun", join(ROOT, "src/main.ts"), "payments", "--config", replica.config.path], { stdout: "pipe", stderr: "pipe" });
      expect({ code: cli.exitCode, err: cli.stderr.toString() }).toEqual({ code: 0, err: "" });
      return cli.stdout.toString();
    });
    expect(outputs[0]).toBe(outputs[1]!);
    expect(outputs[0]).toContain(`Settled payments (${settled.length}):`);
    for (const row of settled) expect(outputs[0]!.split(`tx ${row.tx_hash}`)).toHaveLength(2);
    expect(outputs[0]).toMatch(/flat_items\s+0\.1 tUSDC on devnet\s+\(2 payments\)/);
  });
});

describe("PostgreSQL unreachable", () => {
  test("paid requests get 503 with Retry-After and nothing is charged; free queries and quotes keep working; once it is back, payments work without a restart", async () => {
    const sql = sqlFor(8);
    const { payer, header, key } = await signedFor(a, sql);
    sandbox.resetProxy();
    await postgres.server.halt();
    try {
      for (const replica of [a, b]) {
        const refused = await present(on(replica, sql), header);
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBe("1");
        expect(await refused.text()).toBe("The payment ledger cannot be reached right now, so no payment can be taken; nothing was charged: retry in a few seconds.");
        const free = await fetch(on(replica, "SELECT id, label FROM kinds ORDER BY id"));
        expect((await arrowResult(free)).rows).toHaveLength(4);
        expect((await paymentRequired(on(replica, sqlFor(3)))).accepts).toHaveLength(1);
      }
      expect(sandbox.proxy.requests).toEqual([]);
      expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS);
    } finally {
      await postgres.server.resume();
    }
    const paid = await present(on(b, sql), header);
    const receipt = decodeHeader(paid.headers.get("PAYMENT-RESPONSE"));
    expect((await arrowResult(paid)).rows).toEqual(sandbox.sqliteRows(sql));
    expect(await sandbox.transfersIn(receipt.transaction)).toEqual([{ from: payer.address, to: getAddress(sandbox.devnet.payTo), value: PRICE }]);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);
    expect(await rowsFor(key)).toEqual([expect.objectContaining({ status: "settled", tx_hash: receipt.transaction })]);
    // And the other replica too.
    const another = await signedFor(a, sqlFor(9));
    expect((await present(on(a, sqlFor(9)), another.header)).status).toBe(200);
  }, 30_000);
});

/** A payment whose settlement PostgreSQL missed; recovered in the last test, once its claim has expired. */
let missed: { header: string; key: string; transaction: string; payer: `0x${string}`; sql: string } | undefined;

describe("PostgreSQL going away during /settle", () => {
  test("the money moved: the buyer gets 500 naming the transaction (never a 503 saying nothing was charged), and the attempt stays", async () => {
    const sql = sqlFor(10);
    const { payer, header, key } = await signedFor(a, sql);
    sandbox.resetProxy();
    sandbox.proxy.setBehaviour({ settle: { kind: "hook", before: () => postgres.server.halt() } });
    let response: Response;
    try {
      response = await present(on(a, sql), header);
    } finally {
      sandbox.proxy.setBehaviour({});
      await postgres.server.resume();
    }
    const transaction = (sandbox.proxy.upstream.find((reply) => reply.endpoint === "settle")?.body as { transaction: string }).transaction;
    expect(transaction).toMatch(TX_HASH);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(`The payment was settled (transaction ${transaction}) but could not be recorded; the operator has been alerted.`);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);
    expect(await rowsFor(key)).toEqual([expect.objectContaining({ status: "settling", tx_hash: "" })]);
    missed = { header, key, transaction, payer: payer.address, sql };
  }, 30_000);
});

describe("a replica killed in the middle of a payment", () => {
  test("the other keeps serving; the attempt is kept; within seconds, once the dead replica's claim has run out, the other recovers it from the chain, with no second transfer", async () => {
    const sql = sqlFor(5);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const hold = holdSettle(sandbox.devnet.facilitatorUrl, "after-transfer");
    held.push(hold);
    sandbox.resetProxy();
    sandbox.proxy.setBehaviour({ settle: hold.behaviour });
    const paying = payer.fetch(on(a, sql)).then(
      (response) => response.status,
      (error: unknown) => error,
    );
    const settled = await Promise.race([hold.reached, Bun.sleep(20_000).then(() => undefined)]);
    await a.server.kill();
    const killedAt = Date.now();
    sandbox.proxy.setBehaviour({});
    expect(await paying).toBeInstanceOf(Error);
    expect(settled?.success).toBe(true);
    const transaction = settled!.transaction!;
    const header = payer.signatures.at(-1)!;
    const key = paymentKey(decodePaymentSignature(header));
    expect(await rowsFor(key)).toEqual([expect.objectContaining({ status: "settling", tx_hash: "", resource_url: queryUrl(PUBLIC_URL, sql) })]);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);

    // The survivor serves free and paid queries as before.
    expect((await arrowResult(await fetch(on(b, "SELECT id FROM kinds")))).rows).toHaveLength(4);
    const other = await newPayer(sandbox.devnet, FUNDS);
    const otherPaid = await other.fetch(on(b, sqlFor(4)));
    expect((await arrowResult(otherPaid)).rows).toEqual(sandbox.sqliteRows(sqlFor(4)));
    expect(await sandbox.devnet.balanceOf(other.address)).toBe(FUNDS - PRICE);

    // The dead replica's claim holds the payment ("in use") for at most one lease after its death,
    // as it is no longer renewed; then the survivor recovers it.
    sandbox.resetProxy();
    let recovered = await present(on(b, sql), header);
    while (recovered.status === 402 && (await recovered.clone().json()).error === PAYMENT_MESSAGES.inUse && Date.now() - killedAt < 30_000) {
      await Bun.sleep(200);
      recovered = await present(on(b, sql), header);
    }
    expect(Date.now() - killedAt).toBeLessThan(CLAIM_LEASE_MS + 5_000);
    expect(decodeHeader(recovered.headers.get("PAYMENT-RESPONSE"))).toEqual({ success: true, transaction, network: sandbox.devnet.network, payer: payer.address });
    expect((await arrowResult(recovered)).rows).toEqual(sandbox.sqliteRows(sql));
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await rowsFor(key)).toEqual([expect.objectContaining({ status: "settled", tx_hash: transaction })]);
  }, 45_000);
});

describe("after the claims left by failures have run out", () => {
  test("the payment PostgreSQL missed is recovered from the chain on either replica, with no second transfer", async () => {
    expect(missed).toBeDefined();
    const { header, key, transaction, payer, sql } = missed!;
    await claimExpired({ url: postgres.url }, key);
    sandbox.resetProxy();
    const recovered = await present(on(b, sql), header);
    expect(decodeHeader(recovered.headers.get("PAYMENT-RESPONSE"))).toEqual({ success: true, transaction, network: sandbox.devnet.network, payer });
    expect((await arrowResult(recovered)).rows).toEqual(sandbox.sqliteRows(sql));
    expect(await sandbox.devnet.balanceOf(payer)).toBe(FUNDS - PRICE);
    expect(sandbox.proxy.requests).toEqual([]);
    expect(await rowsFor(key)).toEqual([expect.objectContaining({ status: "settled", tx_hash: transaction })]);
  }, 30_000);
});
