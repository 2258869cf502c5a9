/**
 * SIGTERM drains a real `arrow402 serve` (ARCHITECTURE.md §9 "shutdown drains", §11): sent while a paid
 * request is in settlement (its /settle held by the devnet facilitator proxy), the process stops
 * accepting connections at once, the paid request completes — the client gets 200 with its receipt,
 * the ledger row is settled — and the process exits 0. With a drain time shorter than the
 * settlement, the process still exits 0 on time, and the attempt stays in the ledger, unconfirmed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";
import { refusesConnections, spawnServe, type ServeProcess } from "../ops/serve-process.ts";

const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 20 AND 29 LIMIT 100";
const FLAT_UNITS = 50_000n;

let sandbox: PaidSandbox;
const children: ServeProcess[] = [];

beforeAll(async () => {
  sandbox = await startPaidSandbox();
}, SANDBOX_START_TIMEOUT_MS);
afterAll(async () => {
  for (const child of children) await child.kill();
  await sandbox?.stop();
});

async function serveProcess(server: Record<string, unknown>) {
  const { configPath, config } = await sandbox.writeConfig({ server: { log: "json", ...server } });
  const child = await spawnServe(configPath);
  children.push(child);
  return { child, ledgerPath: config.ledger.path! };
}

function ledger(path: string): { status: string; tx_hash: string }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ status: string; tx_hash: string }, []>("SELECT status, tx_hash FROM payments ORDER BY id").all();
  } finally {
    db.close();
  }
}

/** A signed payment for the flat-priced query of `url`, from a fresh funded payer. */
async function signedPayment(url: string): Promise<string> {
  const payer = await newPayer(sandbox.devnet, 1_000_000n);
  return encodePayment(await payer.sign(await paymentRequired(url)));
}

test("SIGTERM during settlement: new connections refused, the paid request completes and is recorded, exit 0", async () => {
  const { child, ledgerPath } = await serveProcess({});
  const url = queryUrl(child.url, FIXED_SQL);
  const header = await signedPayment(url);
  const payToBefore = await sandbox.devnet.balanceOf(sandbox.devnet.payTo);
  const during = { refused: null as boolean | null };
  sandbox.resetProxy();
  sandbox.proxy.setBehaviour({
    settle: {
      kind: "hook",
      before: async () => {
        child.signal("SIGTERM");
        during.refused = await refusesConnections(child.port);
      },
    },
  });

  const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });
  expect(response.status).toBe(200);
  const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
  expect(receipt).toMatchObject({ success: true, network: sandbox.devnet.network });
  const { rows } = await arrowResult(response);
  expect(rows.map((row) => Number(row.id))).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);

  expect(await child.exited).toBe(0);
  expect(during.refused).toBe(true);
  expect(ledger(ledgerPath)).toEqual([{ status: "settled", tx_hash: receipt.transaction }]);
  expect(await sandbox.devnet.balanceOf(sandbox.devnet.payTo)).toBe(payToBefore + FLAT_UNITS);

  const events = child.events();
  expect(events.find((e) => e.event === "shutdown.started")).toMatchObject({ signal: "SIGTERM", in_flight: 1, deadline_ms: 10_000 });
  expect(events.find((e) => e.event === "payment")).toMatchObject({ table: "flat_items", amount: "50000", transaction: receipt.transaction, via: "settlement" });
  expect(events.find((e) => e.event === "request" && e.route === "/api/query" && e.status === 200)).toBeDefined();
  expect(events.at(-1)).toMatchObject({ event: "shutdown.finished", cut: 0 });
}, 60_000);

test("a drain time shorter than the settlement: exit 0 on time, the attempt kept as unconfirmed", async () => {
  const { child, ledgerPath } = await serveProcess({ shutdown_ms: 300 });
  const url = queryUrl(child.url, FIXED_SQL);
  const header = await signedPayment(url);
  sandbox.resetProxy();
  sandbox.proxy.setBehaviour({ settle: { kind: "hang", ms: 5_000 } });

  const answer = fetch(url, { headers: { "PAYMENT-SIGNATURE": header } }).then(
    (response) => response.status,
    (error: Error) => error.name,
  );
  // The attempt is committed before /settle is sent: wait for it, then stop the server.
  for (let poll = 0; poll < 200 && sandbox.proxy.counts.settle === 0; poll++) await Bun.sleep(25);
  expect(sandbox.proxy.counts.settle).toBe(1);
  const signalled = Date.now();
  child.signal("SIGTERM");
  expect(await child.exited).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(3_000);
  expect(await answer).not.toBe(200);
  expect(ledger(ledgerPath)).toEqual([{ status: "settling", tx_hash: "" }]);
  expect(child.events().at(-1)).toMatchObject({ event: "shutdown.finished", level: "warn", cut: 1 });
}, 60_000);
