/**
 * Fuzzing PAYMENT-SIGNATURE (DESIGN.md §6, §8) against real servers and the devnet: payments signed
 * by a real payer with x402's own client, then altered field by field or encoded wrongly, sent
 * once, again (a replay), twice at once, or to another resource; then payments sent while the
 * facilitator fails on purpose (5xx, a dropped connection, nonsense, silence), and sent again once
 * it is back. Every answer must be a documented one; an altered payment that cannot pay never gets
 * a 200; and at the end the payer's balance on chain has moved by exactly what the 200s delivered,
 * which is exactly what the ledgers record.
 */
import { afterAll, beforeAll, test } from "bun:test";
import type { PaymentRequired } from "@x402/core/types";
import type { EndpointBehaviour } from "../../devnet/index.ts";
import { newPayer, type Payer } from "../support/paying.ts";
import { startEnvironment, type FuzzEnvironment, type FuzzServer } from "./environment.ts";
import { acceptEncodingHeader, acceptHeader } from "./http-gen.ts";
import { checkMoney } from "./money.ts";
import { alterPayment } from "./payment-gen.ts";
import { exchange, type Exchange, type FuzzRequest } from "./raw-http.ts";
import { fuzzSettings, share, type Random } from "./random.ts";
import { FuzzRun, unlessBusy, unlessSlow, type FuzzCase } from "./runner.ts";

const settings = fuzzSettings();
const COUNT = share(settings, 0.15);
const OUTAGES = Math.max(6, Math.round(COUNT / 25));
const FUNDS = 100_000_000n;

let env: FuzzEnvironment;
let payer: Payer;
let unfunded: Payer;
let before: bigint;
const runs: FuzzRun[] = [];
const outageKeys = new Set<string>();
/** Payments that could pay, given up by their client and never answered with their data since. */
const unanswered = new Set<string>();
/** Which case sent a payment, by payment key. */
const paymentCases = new Map<string, string>();

interface PaidTarget {
  label: string;
  server: () => FuzzServer;
  target: string;
  weight: number;
}

const query = (sql: string, extra = "") => `/api/query?query=${encodeURIComponent(sql)}${extra}`;

/** Paid resources with small prices; the slow one runs past the tight server's time limit once paid. */
const TARGETS: PaidTarget[] = [
  { label: "per row", server: () => env.main, target: query("SELECT id FROM items WHERE id <= 3"), weight: 4 },
  { label: "per row with a minimum", server: () => env.main, target: query("SELECT id, name FROM cheap_items LIMIT 2"), weight: 2 },
  { label: "fixed", server: () => env.main, target: query("SELECT * FROM flat_items LIMIT 1"), weight: 2 },
  { label: "per row, 50 rows", server: () => env.main, target: query("SELECT id, price FROM items WHERE id > 150"), weight: 1 },
  { label: "per row, as CSV", server: () => env.main, target: query("SELECT * FROM items WHERE id IN (1, 5, 9)", "&format=csv"), weight: 1 },
  { label: "metadata", server: () => env.main, target: "/api/table/items", weight: 2 },
  { label: "per row, tight limits", server: () => env.tight, target: query("SELECT id FROM items WHERE id <= 2"), weight: 1 },
  { label: "fixed, past the time limit", server: () => env.tight, target: query(`SELECT id FROM flat_items WHERE length(strftime('${"%Y-%m-%dT%H:%M:%f".repeat(300)}', id)) < 0 LIMIT 1`), weight: 1 },
];

const quotes = new Map<string, Promise<PaymentRequired>>();

/** The 402 of a paid target (asked once per run: quotes do not change while the data does not). */
function quoteOf(target: PaidTarget): Promise<PaymentRequired> {
  const key = `${target.server().name} ${target.target}`;
  let quote = quotes.get(key);
  if (quote === undefined) {
    quote = unlessSlow(() => exchange(target.server().origin, { method: "GET", target: target.target, headers: [] }, 30_000)).then((result) => {
      if (result.kind !== "response" || result.response.status !== 402) throw new Error(`no 402 for ${key}: ${JSON.stringify(result).slice(0, 300)}`);
      return JSON.parse(new TextDecoder().decode(result.response.body)) as PaymentRequired;
    });
    quotes.set(key, quote);
    // A failed quote is asked again by the next case rather than failing every case after it.
    quote.catch(() => quotes.delete(key));
  }
  return quote;
}

/** A fresh payment for one of the 402's offers (x402's client signs the first it is given). */
async function sign(rng: Random, signer: Payer, target: PaidTarget) {
  const required = await quoteOf(target);
  return signer.sign({ ...required, accepts: [rng.pick(required.accepts)] });
}

/** The same offer: what the signed authorization pays (amount, asset, recipient, network). */
function sameOffer(a: PaymentRequired["accepts"][number], b: PaymentRequired["accepts"][number]): boolean {
  return a.amount === b.amount && a.network === b.network && a.asset.toLowerCase() === b.asset.toLowerCase() && a.payTo.toLowerCase() === b.payTo.toLowerCase();
}

/** The server's key of a payment (network|asset|from|nonce, lower case), or null for a value that has none. */
function paymentKeyOf(payload: any): string | null {
  const parts = [payload?.accepted?.network, payload?.accepted?.asset, payload?.payload?.authorization?.from, payload?.payload?.authorization?.nonce];
  return parts.every((part) => typeof part === "string") ? parts.join("|").toLowerCase() : null;
}

const receiptOf = (result: Exchange): string | null => {
  if (result.kind !== "response" || result.response.status !== 200) return null;
  const header = result.response.headers["payment-response"];
  return header === undefined ? null : (JSON.parse(Buffer.from(header, "base64").toString("utf8")).transaction as string);
};

/**
 * After the client gave up, it sends the same payment again, as a client that lost the response
 * does (DESIGN.md §6), waiting while the server is busy (429, 503) or the first request still
 * holds the payment (402 "in use"); then it is served (settled by the first, or paid now). An
 * intact payment ends in a 200 on the main server; on the tight one its query may run past the
 * time limit again, and a payment the first request settled then stays unanswered.
 */
async function recovered(run: FuzzRun, fuzzCase: FuzzCase, intact: boolean, key: string | null): Promise<string[]> {
  const request = fuzzCase.request;
  for (let attempt = 0; ; attempt++) {
    const again = await unlessBusy(() => exchange(fuzzCase.server.origin, request, fuzzCase.server.boundMs));
    const problems = run.verify(fuzzCase, again).map((problem) => `sent again after giving up: ${problem}`);
    const inUse = again.kind === "response" && again.response.status === 402 && new TextDecoder().decode(again.response.body).includes("being processed");
    if (inUse && attempt < 40) {
      await Bun.sleep(250);
      continue;
    }
    if (receiptOf(again) === null && fuzzCase.mustRefuse === undefined && key !== null) unanswered.add(key);
    if (problems.length > 0 || !intact) return problems;
    return receiptOf(again) === null ? [`an intact payment sent again after giving up got ${again.kind === "response" ? again.response.status : again.kind}, not the data`] : [];
  }
}

beforeAll(async () => {
  env = await startEnvironment({ process: false });
  payer = await newPayer(env.sandbox.devnet, FUNDS);
  unfunded = await newPayer(env.sandbox.devnet, 0n);
  before = await env.sandbox.devnet.balanceOf(payer.address);
}, 60_000);
afterAll(() => env?.stop());

test(`altered payments get documented answers and never pay (${COUNT} requests, seed ${settings.seed})`, async () => {
  const run = new FuzzRun("payments", settings, env);
  runs.push(run);
  await run.run(COUNT, async (rng, index): Promise<FuzzCase> => {
    const target = rng.weighted(TARGETS.map((t) => [t.weight, t] as const));
    const server = target.server();
    const signer = rng.weighted<"payer" | "unfunded" | "other resource">([
      [18, "payer"],
      [1, "unfunded"],
      [1, "other resource"],
    ]);
    const others = TARGETS.filter((t) => t !== target && t.server() === server);
    const signedFor = signer === "other resource" ? rng.pick(others) : target;
    const payload = await sign(rng, signer === "unfunded" ? unfunded : payer, signedFor);
    const altered = alterPayment(rng, payload, { stranger: unfunded.address, otherResource: server.url + rng.pick(others).target, nowSeconds: BigInt(Math.floor(Date.now() / 1000)) }, true);
    const headers: FuzzRequest["headers"] = [["PAYMENT-SIGNATURE", altered.header!]];
    if (rng.chance(0.1)) headers.push(["Accept", acceptHeader(rng)]);
    if (rng.chance(0.1)) headers.push(["Accept-Encoding", acceptEncodingHeader(rng)]);
    if (rng.chance(0.03)) headers.push(["PAYMENT-SIGNATURE", rng.pick([altered.header!, "e30="])]);
    rng.shuffle(headers);
    const request: FuzzRequest = { method: "GET", target: target.target, headers };
    // A payment names the resource it was signed for; without that name it is bound to none until first
    // used (README "Bound to its resource"), so it may pay any resource that makes the same offer.
    const unbound = altered.name === "resource missing" && (await quoteOf(target)).accepts.some((offer) => sameOffer(offer, payload.accepted));
    const boundElsewhere = signer === "other resource" && !unbound;
    const mustRefuse = signer === "unfunded" ? "signed by an account without funds" : boundElsewhere ? "signed for another resource's offer" : altered.mustRefuse ? altered.name : undefined;
    const fuzzCase: FuzzCase = { kind: `payment/${mustRefuse ? "must-refuse" : "may-pay"}`, server, request, mustRefuse, note: `${target.label}; ${altered.name}` };

    const mode = rng.weighted<"once" | "again" | "twice at once" | "elsewhere" | "abandoned">([
      [14, "once"],
      [3, "again"],
      [2, "twice at once"],
      [1, "elsewhere"],
      [2, "abandoned"],
    ]);
    fuzzCase.note += `; sent ${mode}`;
    const key = paymentKeyOf(altered.value);
    if (key !== null) paymentCases.set(key, `payments case #${index} (${fuzzCase.note})`);
    if (mode === "abandoned") fuzzCase.abandonAfterMs = rng.int(0, 80);
    const intact = signer === "payer" && altered.name === "none (valid)" && headers.length === 1;
    const twin = mode === "twice at once" ? exchange(server.origin, request, server.boundMs) : null;
    fuzzCase.extra = async (first) => {
      if (twin !== null) return run.verify(fuzzCase, await twin).map((problem) => `the concurrent copy: ${problem}`);
      if (mode === "again") {
        const again = await unlessBusy(() => exchange(server.origin, request, server.boundMs));
        const problems = run.verify(fuzzCase, again).map((problem) => `sent again: ${problem}`);
        const paid = receiptOf(first);
        // A settled payment presented again for its resource is served again, without a new charge
        // (DESIGN.md §6); its query runs again, so it may still meet the time limit (400).
        const status = again.kind === "response" ? again.response.status : again.kind;
        const servedAgain = receiptOf(again) === paid || status === 400;
        if (paid !== null && !servedAgain) problems.push(`sent again after settlement ${paid}, it got ${status} without that receipt`);
        return problems;
      }
      if (mode === "abandoned") return recovered(run, fuzzCase, intact && target.server() === env.main, paymentKeyOf(altered.value));
      if (mode === "elsewhere" && others.length > 0) {
        const elsewhere = { ...request, target: rng.pick(others).target };
        const settled = receiptOf(first) !== null;
        // Once settled for one resource, the payment buys no other (DESIGN.md §6).
        return run.verify({ request: elsewhere, server, mustRefuse: settled ? "settled for another resource" : undefined }, await unlessBusy(() => exchange(server.origin, elsewhere, server.boundMs))).map((problem) => `sent to ${elsewhere.target}: ${problem}`);
      }
      return [];
    };
    return fuzzCase;
  });
  console.log(`payments fuzz, seed ${settings.seed}: ${run.summary()}`);
  run.assertClean();
}, 600_000);

/** Ways a facilitator fails (devnet/proxy.ts); none of them forwards, so no money moves while it fails. */
const FAILURES: EndpointBehaviour[] = [{ kind: "status", status: 500 }, { kind: "status", status: 502 }, { kind: "status", status: 401 }, { kind: "drop" }, { kind: "malformed" }, { kind: "wrong-shape" }, { kind: "hang" }];

test(`payments while the facilitator fails get a 500 or a refusal, and go through once it is back (${OUTAGES} payments, seed ${settings.seed})`, async () => {
  const run = new FuzzRun("payments-outage", settings, env);
  runs.push(run);
  await run.run(
    OUTAGES,
    async (rng): Promise<FuzzCase> => {
      const target = rng.pick(TARGETS.filter((t) => t.server() === env.main));
      const endpoint = rng.pick(["verify", "settle"] as const);
      const failure = rng.pick(FAILURES);
      const payload = await sign(rng, payer, target);
      if (endpoint === "settle") outageKeys.add(paymentKeyOf(payload)!);
      const request: FuzzRequest = { method: "GET", target: target.target, headers: [["PAYMENT-SIGNATURE", Buffer.from(JSON.stringify(payload)).toString("base64")]] };
      env.sandbox.proxy.setBehaviour({ [endpoint]: failure });
      return {
        kind: `outage/${endpoint}`,
        server: env.main,
        request,
        outage: true,
        note: `${target.label}; /${endpoint} fails: ${JSON.stringify(failure)}`,
        extra: async () => {
          env.sandbox.proxy.setBehaviour({});
          // The facilitator is back: the same payment is taken (or still held: 402), never a 500.
          const retry = await exchange(env.main.origin, request, env.main.boundMs);
          return run.verify({ request, server: env.main }, retry).map((problem) => `sent again once the facilitator was back: ${problem}`);
        },
      };
    },
    1,
  );
  console.log(`payment outage fuzz, seed ${settings.seed}: ${run.summary()}`);
  run.assertClean();
}, 600_000);

test("the payer's balance moved by exactly what was delivered, and the ledgers record exactly that", async () => {
  const problems = await checkMoney({
    env,
    payer: payer.address,
    before,
    receipts: runs.flatMap((run) => run.receipts),
    outageKeys,
    unanswered,
    caseOf: (key) => paymentCases.get(key),
    untouched: [{ address: unfunded.address, balance: 0n }],
  });
  if (problems.length > 0) throw new Error(`seed ${settings.seed} (ARROW402_FUZZ_SEED=${settings.seed} bun test tests/fuzz/payments.test.ts):\n${problems.join("\n")}`);
}, 120_000);
