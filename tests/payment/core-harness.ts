/**
 * The payment core against real parts: a real SQLite table for counting and running queries, the
 * devnet's x402 facilitator settling on a local chain (behind the proxy, which counts calls and can
 * misbehave), a real SQLite payment store, the chain read through the devnet's RPC, and payments
 * signed by @x402/fetch's client.
 */
import { afterAll, beforeAll, beforeEach, expect } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PaymentRequired } from "@x402/core/types";
import { startDevnet, startFacilitatorProxy, type Devnet, type FacilitatorProxy } from "../../devnet/index.ts";
import type { PriceTag, TokenInfo } from "../../src/config/types.ts";
import { createChainReader } from "../../src/payment/chain.ts";
import { createPaymentCore, type PaidWork, type PaymentCore, type PaymentOutcome } from "../../src/payment/core.ts";
import type { PaymentEvent } from "../../src/payment/events.ts";
import { createFacilitatorClient } from "../../src/payment/facilitator.ts";
import type { ExactPaymentPayload } from "../../src/payment/payload.ts";
import type { PaymentStore } from "../../src/payment/store.ts";
import { openSqliteStore } from "../../src/payment/store/sqlite.ts";
import { decodePaymentSignature } from "../../src/payment/wire.ts";
import { payingClient } from "./client.ts";
import { devnetToken, fundedAccount } from "./devnet-token.ts";
import { fixed, metadata, perRow } from "./fixtures.ts";

export const ARROW = "application/vnd.apache.arrow.stream";

export interface Harness {
  devnet: Devnet;
  proxy: FacilitatorProxy;
  token: TokenInfo;
  store: PaymentStore;
  core: PaymentCore;
  data: Database;
  events: PaymentEvent[];
  /** Milliseconds since the epoch the core sees; null: the real clock. */
  clock: number | null;
  /** `rpc`: false for no endpoint, a URL for another endpoint than the devnet's. */
  newCore(options?: { facilitatorTimeoutMs?: number; rpc?: boolean | string; store?: PaymentStore }): PaymentCore;
}

export function useHarness(): Harness {
  const dir = mkdtempSync(join(tmpdir(), "arrow402-core-"));
  const h = { events: [] as PaymentEvent[], clock: null } as unknown as Harness;
  h.data = new Database(":memory:");
  h.data.run("CREATE TABLE swaps (id INTEGER PRIMARY KEY, amount_usd REAL)");
  for (let id = 1; id <= 40; id++) h.data.run("INSERT INTO swaps (id, amount_usd) VALUES (?, ?)", [id, id * 1.5]);
  let stores = 0;

  beforeAll(async () => {
    h.devnet = await startDevnet();
    h.proxy = await startFacilitatorProxy(h.devnet.facilitatorUrl);
    h.token = devnetToken(h.devnet);
  }, 60_000);
  afterAll(async () => {
    await h.proxy?.stop();
    await h.devnet?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    h.proxy.setBehaviour({});
    h.proxy.resetCounts();
    h.clock = null;
    h.events.length = 0;
    stores += 1;
    h.store = openSqliteStore(join(dir, `ledger-${stores}.sqlite`));
    h.newCore = (options = {}) =>
      createPaymentCore({
        facilitator: createFacilitatorClient({ url: h.proxy.url, timeoutMs: options.facilitatorTimeoutMs ?? 10_000 }),
        store: options.store ?? h.store,
        chain: createChainReader(options.rpc === false ? {} : { [h.devnet.chainId]: typeof options.rpc === "string" ? options.rpc : h.devnet.rpcUrl }),
        maxTimeoutSeconds: 300,
        maxReplays: 3,
        onEvent: (event) => h.events.push(event),
        now: () => h.clock ?? Date.now(),
      });
    h.core = h.newCore();
  });
  return h;
}

export const perRowTags = (h: Harness): PriceTag[] => [perRow(100n, { token: h.token, payTo: h.devnet.payTo, minTotalAmount: 500n })];
export const fixedTags = (h: Harness): PriceTag[] => [fixed(7000n, { token: h.token, payTo: h.devnet.payTo })];
export const metadataTag = (h: Harness, amount = 300n) => metadata(amount, { token: h.token, payTo: h.devnet.payTo });

/** Work over the real table, counting how often the core counts and runs it. */
export function queryWork(maxId: number, tags: PriceTag[], payload: ExactPaymentPayload | null = null, h?: Harness, executeEarly = true) {
  const calls = { count: 0, run: 0 };
  const sql = `SELECT * FROM swaps WHERE id <= ${maxId}`;
  const data = h!.data;
  const work: PaidWork = {
    tags,
    tableName: "swaps",
    query: sql,
    resource: { url: `http://localhost:4021/api/query?query=${encodeURIComponent(sql)}`, description: "DEX swaps", mimeType: ARROW },
    payload,
    format: "arrow",
    executeEarly,
    countRows: async () => {
      calls.count += 1;
      return data.query<{ n: number }, []>(`SELECT count(*) AS n FROM (${sql})`).get()!.n;
    },
    execute: async () => {
      calls.run += 1;
      const rows = data.query(sql).all();
      // The answer's fingerprint: the rows as JSON (the server's is the digest of their encoded bytes).
      return { rows: rows.length, answer: { digest: new Bun.CryptoHasher("sha256").update(JSON.stringify(rows)).digest("hex"), format: "arrow" } };
    },
  };
  return { work, calls };
}

export function expect402(outcome: PaymentOutcome) {
  if (outcome.kind !== "payment-required") throw new Error(`expected payment-required, got ${JSON.stringify(outcome)}`);
  return outcome;
}

export function expectPaid(outcome: PaymentOutcome) {
  if (outcome.kind !== "paid") throw new Error(`expected paid, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** A funded payer's signed payload for the first offer of a 402 body. */
export async function signFirst(h: Harness, body: PaymentRequired, balance = 1_000_000n) {
  const payer = await fundedAccount(h.devnet, balance);
  const header = await payingClient(payer.account).sign(body);
  return { payload: decodePaymentSignature(header), header, payer };
}

/** A deep copy of a payload, to tamper with. */
export const copy = (payload: ExactPaymentPayload): ExactPaymentPayload => JSON.parse(JSON.stringify(payload));
