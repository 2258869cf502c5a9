/**
 * Item 4: a payment that can never settle buys no work. The server's CPU time (utime + stime from
 * /proc/PID/stat) over N requests of each kind, for a 1M-row per_row query:
 *   (a) the unpaid quote (402),
 *   (b) a forged payment: a well-formed payload for the current offer whose signature is a valid
 *       signature of another authorization by another key, so it does not recover to `from`,
 *   (c) an unfunded payment: correctly signed by a wallet that holds no tokens.
 * Measured twice. With a new query text per request (each selects the same 1M rows): what an
 * unpaid request costs at worst, a count of the rows; (b) and (c) must cost at most 2× (a). And
 * with one query text quoted before (its count cached): every kind is cheap, and what is left of
 * (b) and (c) is the local signature check. Every (b) and (c) request must get 402; the
 * facilitator must never be called for (b), and only at /verify for (c). Rounds rotate which kind
 * goes first; payloads are signed before their batch starts, so signing is not in any figure.
 */
import type { PaymentPayload } from "@x402/core/types";
import { toHex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { queryUrl } from "./arrow-client.ts";
import type { DevnetProcess, FacilitatorCalls } from "./devnet.ts";
import { createPayer, quote, sendRefused, withForeignSignature, withNonce } from "./payer.ts";
import { bytesRead, cpuMs, type ChildServer } from "./processes.ts";
import { runsOf, type SectionResult } from "./report.ts";

export const UNSETTLED_SQL = "SELECT * FROM per_row_transfers WHERE amount >= 0";

/** The same rows under a new text each time: `id > -n` holds for every row. */
let serial = 0;
const freshSql = () => `${UNSETTLED_SQL} AND id > ${-1 - serial++}`;
type Kind = "quote" | "forged" | "unfunded";

/**
 * Requests of each kind per round, and rounds. CPU time is counted in 10 ms ticks, so each round
 * of a kind must take at least ~100 ms of server CPU: a cached quote costs ~0.1 ms, a refused
 * payment on a quoted text ~1 ms, anything on a new text a count (~100 ms).
 */
const PER_ROUND: Record<Kind, number> = { quote: 1000, forged: 200, unfunded: 200 };
const PER_ROUND_FRESH: Record<Kind, number> = { quote: 8, forged: 8, unfunded: 8 };
const ROUNDS = 3;
/** Requests in flight at once. */
const CONCURRENCY = 4;
/** How long the facilitator's log lines get to arrive after a batch (they are written before it answers). */
const LOG_DRAIN_MS = 200;

const KINDS: Kind[] = ["quote", "forged", "unfunded"];
const LABELS: Record<Kind, string> = {
  quote: "(a) unpaid quote",
  forged: "(b) forged signature",
  unfunded: "(c) unfunded payer",
};

interface Batch {
  cpuMs: number;
  bytesRead: number;
  calls: FacilitatorCalls;
  /** The 402's `error`, for the refused payments. */
  reasons: Set<string>;
}

/** The `error` of a 402 body (x402's PaymentRequired). */
function refusalReason(body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof error === "string") return error;
  } catch {}
  throw new Error(`a 402 without an x402 PaymentRequired body naming its reason: ${body.slice(0, 300)}`);
}

async function inParallel(count: number, action: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await action(next++);
    }),
  );
}

export async function measureUnsettled(devnet: DevnetProcess, server: ChildServer, expectedRows: number): Promise<SectionResult> {
  const fresh = await measureKinds(devnet, server, expectedRows, true);
  const cached = await measureKinds(devnet, server, expectedRows, false);
  return { checks: fresh.checks, details: [...fresh.details, ...cached.details] };
}

async function measureKinds(devnet: DevnetProcess, server: ChildServer, expectedRows: number, freshTexts: boolean): Promise<SectionResult> {
  const perRound = freshTexts ? PER_ROUND_FRESH : PER_ROUND;
  const mode = freshTexts ? "new query text per request" : "one query text, quoted before";
  const urlFor = () => queryUrl(server.url, freshTexts ? freshSql() : UNSETTLED_SQL);
  const url = queryUrl(server.url, UNSETTLED_SQL);
  // The first quote counts the rows (one pass over the table); later quotes of the text reuse it.
  const { required } = await quote(url);
  const price = required.accepts[0]?.amount;
  if (price !== String(expectedRows)) throw new Error(`${UNSETTLED_SQL}: the per_row price is ${price} units, expected ${expectedRows} (one unit per row)`);
  const payer = createPayer(devnet.payerKey);
  const unfunded = createPayer(devnet.unfundedKey);
  const foreign = ((await createPayer(generatePrivateKey()).sign(required)).payload as { signature: string }).signature;

  // A forged payload is a payer's signed payload with a fresh nonce and the foreign signature:
  // nothing needs signing per request, and every payload is distinct (a duplicate would be
  // turned away earlier, by the one-request-per-payment lock).
  const template = await payer.sign(required);
  // A payload names the resource it was quoted for: each is made for its own request's URL.
  const payloadsFor = async (kind: Kind, urls: string[]): Promise<PaymentPayload[]> => {
    const payloads: PaymentPayload[] = [];
    for (const target of kind === "quote" ? [] : urls) {
      const forTarget = { ...required, resource: { ...required.resource, url: target } };
      if (kind === "unfunded") payloads.push(await unfunded.sign(forTarget));
      else payloads.push(withForeignSignature(withNonce({ ...template, resource: forTarget.resource }, toHex(crypto.getRandomValues(new Uint8Array(32)))), foreign));
    }
    return payloads;
  };

  async function batch(kind: Kind, count: number): Promise<Batch> {
    const urls = Array.from({ length: count }, urlFor);
    const payloads = await payloadsFor(kind, urls);
    const reasons = new Set<string>();
    const calls = devnet.calls();
    const cpu = cpuMs(server.pid);
    const read = bytesRead(server.pid);
    await inParallel(count, async (index) => {
      if (kind === "quote") {
        await quote(urls[index]!);
        return;
      }
      reasons.add(refusalReason(await sendRefused(urls[index]!, payloads[index]!)));
    });
    const result = { cpuMs: cpuMs(server.pid) - cpu, bytesRead: bytesRead(server.pid) - read };
    if (kind === "unfunded") await devnet.waitForCalls({ verify: calls.verify + count, settle: calls.settle });
    await Bun.sleep(LOG_DRAIN_MS);
    const after = devnet.calls();
    return { ...result, calls: { verify: after.verify - calls.verify, settle: after.settle - calls.settle }, reasons };
  }

  // Unmeasured warm-up of every kind (JIT, connections).
  for (const kind of KINDS) await batch(kind, freshTexts ? 2 : 20);
  const batches = new Map<Kind, Batch[]>(KINDS.map((kind) => [kind, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < KINDS.length; i++) {
      const kind = KINDS[(i + round) % KINDS.length]!;
      batches.get(kind)!.push(await batch(kind, perRound[kind]));
    }
  }

  const requests = (kind: Kind) => perRound[kind] * ROUNDS;
  const total = (kind: Kind, field: "cpuMs" | "bytesRead") => batches.get(kind)!.reduce((sum, b) => sum + b[field], 0);
  const perRequest = (kind: Kind) => total(kind, "cpuMs") / requests(kind);
  const calls = (kind: Kind) => batches.get(kind)!.reduce((sum, b) => ({ verify: sum.verify + b.calls.verify, settle: sum.settle + b.calls.settle }), { verify: 0, settle: 0 });
  const reasons = (kind: Kind) => [...new Set(batches.get(kind)!.flatMap((b) => [...b.reasons]))].join(" | ");
  const forgedCalls = calls("forged");
  const unfundedCalls = calls("unfunded");
  if (forgedCalls.verify + forgedCalls.settle > 0) {
    throw new Error(`the facilitator was called for forged payments (${forgedCalls.verify} /verify, ${forgedCalls.settle} /settle): they must be refused locally`);
  }
  if (unfundedCalls.settle > 0 || unfundedCalls.verify !== requests("unfunded")) {
    throw new Error(`unfunded payments made ${unfundedCalls.verify} /verify and ${unfundedCalls.settle} /settle calls, expected ${requests("unfunded")} /verify and none`);
  }
  // Each kind must be refused on the path it is meant to take, or its figure measures another one.
  for (const [kind, pattern] of [["forged", /signature/i], ["unfunded", /insufficient/i]] as const) {
    if (!batches.get(kind)!.every((b) => [...b.reasons].every((reason) => pattern.test(reason)))) {
      throw new Error(`${LABELS[kind]} payments were refused for another reason than expected (${pattern}): ${reasons(kind)}`);
    }
  }
  const base = perRequest("quote");
  const cpu = (v: number) => `${(v * 1000).toFixed(0)} µs`;
  const check = (kind: Kind) => ({
    item: "4",
    figure: `${LABELS[kind]}: server CPU per request, ${expectedRows}-row per_row query, ${mode}`,
    measured: cpu(perRequest(kind)),
    baseline: `(a) unpaid quote ${cpu(base)}`,
    ratio: perRequest(kind) / base,
    target: "≤ 2.00×",
    pass: perRequest(kind) / base <= 2,
  });
  return {
    checks: [check("forged"), check("unfunded")],
    details: [
      ...(freshTexts ? [{ item: "4", name: "query", value: `\`${UNSETTLED_SQL}\` (new texts: \`… AND id > -n\`, the same rows), priced ${price} units (one per row)` }] : []),
      ...KINDS.map((kind) => ({
        item: "4",
        name: `${LABELS[kind]}, ${mode}: server CPU per round of ${perRound[kind]} requests (${cpu(perRequest(kind))} per request); bytes read per request`,
        value: `${runsOf(batches.get(kind)!.map((b) => b.cpuMs), (v) => `${v.toFixed(0)} ms`)}; ${(total(kind, "bytesRead") / requests(kind)).toFixed(0)} bytes`,
      })),
      { item: "4", name: `facilitator calls, ${mode}: forged / unfunded`, value: `${forgedCalls.verify} /verify + ${forgedCalls.settle} /settle / ${unfundedCalls.verify} /verify + ${unfundedCalls.settle} /settle (${requests("forged")} and ${requests("unfunded")} requests, every one answered 402)` },
      ...(freshTexts
        ? [
            { item: "4", name: "402 reason: forged", value: reasons("forged") },
            { item: "4", name: "402 reason: unfunded", value: reasons("unfunded") },
          ]
        : [{ item: "4", name: `${mode}: forged / unfunded ÷ quote`, value: `${(perRequest("forged") / base).toFixed(1)}× / ${(perRequest("unfunded") / base).toFixed(1)}× (the local signature check)` }]),
    ],
  };
}
