/**
 * Fuzzing the oracles a buyer could try on tables whose quotes tell nothing (DESIGN.md §17, README
 * "What a buyer learns before paying", "Replays and races"), against the `sealed` server
 * (sealed-tables.ts) with real payments on the devnet:
 * - probes: the same query for a trap row and an ordinary one, built to fail on one value and not
 *   another (abs() of -2^63, LIKE/GLOB patterns from the table, a value that does not fit its type,
 *   the time limit), over HTTP and MCP, unpaid then paid. A 400 before payment (or a 402) must not
 *   depend on the row; every failure after /verify has the one PaidQueryFailedError text, no
 *   earlier than the time limit; SQLite must not fail on the data of a query that was quoted;
 * - OFFSET probes: over max_rows, a 400 before payment whatever the OFFSET; within, rows as SQLite
 *   gives them;
 * - replays after writes: a paid answer presented again while the case inserts, deletes and updates
 *   its rows is the very same bytes or a 402, never other rows; at most max_replays times; and when
 *   the rows are as they were, it is served.
 * At the end: one failure text across the run, and nothing charged for any failure (money.ts).
 */
import { afterAll, beforeAll, test } from "bun:test";
import type { PaymentRequired } from "@x402/core/types";
import { tableFromIPC } from "apache-arrow";
import { PaidQueryFailedError } from "../../src/errors.ts";
import { newPayer, type Payer } from "../support/paying.ts";
import { startEnvironment, type FuzzEnvironment, type FuzzServer } from "./environment.ts";
import { checkMcpAnswer } from "./mcp-oracle.ts";
import { checkMoney } from "./money.ts";
import { parseJson } from "./oracle.ts";
import { describeRequest, exchange, type Exchange, type FuzzRequest } from "./raw-http.ts";
import { fuzzSettings, share, type Random } from "./random.ts";
import { FuzzRun, unlessBusy, unlessSlow, VALIDATION_DEADLINE, type FuzzCase } from "./runner.ts";
import { journalQuery, offsetProbe, probe } from "./sealed-gen.ts";
import { DataWriter, journalSlot, LocalReads, SEALED_LIMITS } from "./sealed-tables.ts";

const settings = fuzzSettings();
/** Cases, each sending three requests or more (pairs, payments, presentations): about 15% of the requests. */
const COUNT = share(settings, 0.05);
const FUNDS = 1_000_000_000n;
const MAX_ROWS = SEALED_LIMITS.max_rows!;
const TIME_LIMIT_MS = SEALED_LIMITS.query_timeout_ms;
/** limits.max_replays: the sealed server keeps the default. */
const MAX_REPLAYS = 3;
const FAILED_TEXT = new PaidQueryFailedError(TIME_LIMIT_MS).message;
/** Timers may fire a little early; an answer sent before the time limit minus this is early. */
const EARLY_TOLERANCE_MS = 20;

let env: FuzzEnvironment;
let sealed: FuzzServer;
let payer: Payer;
let before: bigint;
let writer: DataWriter;
let local: LocalReads;
let run: FuzzRun;
/** Answers to the requests cases send after their first, by what they were (for the log). */
const tally = new Map<string, number>();
const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);
/** Every text of a failure after /verify, with the first case that got it. */
const failureTexts = new Map<string, string>();

const MCP_HEADERS: [string, string][] = [
  ["Content-Type", "application/json"],
  ["Accept", "application/json, text/event-stream"],
];

beforeAll(async () => {
  env = await startEnvironment({ process: false, sealed: true });
  sealed = env.sealed!;
  payer = await newPayer(env.sandbox.devnet, FUNDS);
  before = await env.sandbox.devnet.balanceOf(payer.address);
  writer = new DataWriter(env.sandbox.databasePath);
  local = new LocalReads(env.sandbox.databasePath);
}, 60_000);
afterAll(async () => {
  writer?.close();
  local?.close();
  await env?.stop();
});

type Transport = "http" | "mcp";

/** An answer over either transport, as the oracle compares them. */
interface Answer {
  /** HTTP status, or for MCP the tool result's: 200 data, 402 PaymentRequired, the refusal's status; a string when there was no response. */
  status: number | string;
  /** The refusal's text (400s). */
  text: string;
  required?: PaymentRequired & { error?: string };
  /** Rows delivered, when they could be counted (Arrow over HTTP, MCP data). */
  rows?: number;
  elapsedMs: number;
}

const target = (sql: string) => `/api/query?query=${encodeURIComponent(sql)}`;

function mcpBody(sql: string, id: number, payment?: unknown): string {
  const params = { name: "query", arguments: { sql }, ...(payment === undefined ? {} : { _meta: { "x402/payment": payment } }) };
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params });
}

function requestFor(transport: Transport, sql: string, payment?: unknown): FuzzRequest {
  if (transport === "mcp") return { method: "POST", target: "/mcp", headers: MCP_HEADERS, body: mcpBody(sql, 1, payment) };
  const headers: FuzzRequest["headers"] = payment === undefined ? [] : [["PAYMENT-SIGNATURE", Buffer.from(JSON.stringify(payment)).toString("base64")]];
  return { method: "GET", target: target(sql), headers };
}

function answerOf(transport: Transport, result: Exchange): Answer {
  if (result.kind !== "response") return { status: result.kind, text: "", elapsedMs: result.elapsedMs };
  const { status, body, headers, elapsedMs } = result.response;
  const text = new TextDecoder().decode(body);
  if (transport === "http") {
    const answer: Answer = { status, text, elapsedMs };
    if (status === 402) answer.required = parseJson(text);
    if (status === 200 && (headers["content-type"] ?? "").startsWith("application/vnd.apache.arrow.stream") && headers["content-encoding"] === undefined) {
      try {
        answer.rows = tableFromIPC(body).numRows;
      } catch {
        // resultProblem (oracle.ts) reports it.
      }
    }
    return answer;
  }
  const tool = parseJson(text)?.result;
  if (status !== 200 || tool === undefined) return { status: status === 200 ? "no tool result" : status, text, elapsedMs };
  const structured = tool.structuredContent;
  if (tool.isError === true && structured?.x402Version === 2) return { status: 402, text: "", required: structured, elapsedMs };
  if (tool.isError === true) return { status: typeof structured?.status === "number" ? structured.status : "refusal", text: String(structured?.error), elapsedMs };
  return { status: 200, text: "", rows: Array.isArray(structured?.rows) ? structured.rows.length : undefined, elapsedMs };
}

/** Sends a request of the case (waiting while the server is busy), judged by the common oracle and, over MCP, the MCP one. */
async function send(label: string, transport: Transport, request: FuzzRequest, sql: string, problems: string[]): Promise<{ result: Exchange; answer: Answer }> {
  const result = await unlessBusy(() => exchange(sealed.origin, request, sealed.boundMs));
  const found = [...run.verify({ request, server: sealed }, result), ...mcpProblems(transport, result, sql)];
  if (found.length > 0) problems.push(...found.map((problem) => `${label}: ${problem}\n    (${describeRequest(request).replaceAll("\n  ", "; ")})`));
  const answer = answerOf(transport, result);
  count(`${transport} ${label.replace(/ \(.*|,? row \d+|(^|, )OFFSET \d+/g, "") || "unpaid"} ${answer.status}`);
  return { result, answer };
}

/** Over MCP, the tool result's own checks (mcp-oracle.ts); its receipts recorded for the money check. */
function mcpProblems(transport: Transport, result: Exchange, sql: string): string[] {
  if (transport !== "mcp" || result.kind !== "response" || result.response.status !== 200) return [];
  const verdict = checkMcpAnswer(new TextDecoder().decode(result.response.body), { tool: "query", args: { sql } }, env.reads);
  run.receipts.push(...verdict.receipts.map((receipt) => ({ ...receipt, server: sealed.name })));
  return verdict.problems;
}

/** A failure after /verify: the one text, no earlier than the time limit; recorded for the run-wide check. */
function checkPaidFailure(label: string, caseName: string, answer: Answer, problems: string[]): void {
  if (busy(answer)) return;
  if (!failureTexts.has(answer.text)) failureTexts.set(answer.text, `${caseName}, ${label}`);
  if (answer.text !== FAILED_TEXT) problems.push(`${label}: a failure after /verify answered ${JSON.stringify(answer.text.slice(0, 300))}, not the one text of PaidQueryFailedError`);
  if (answer.elapsedMs < TIME_LIMIT_MS - EARLY_TOLERANCE_MS) problems.push(`${label}: a failure after /verify answered after ${answer.elapsedMs} ms, before the ${TIME_LIMIT_MS} ms time limit`);
}

/** Turned away for the machine's load, before the query or the payment was looked at: it says nothing about the data. */
const busy = (answer: Answer) => answer.status === 429 || answer.status === 503 || (answer.status === 400 && VALIDATION_DEADLINE.test(answer.text));

/** What two unpaid answers of a pair tell, with the row's selector masked: they must be equal. */
function pairView(answer: Answer, selector: string): string {
  if (answer.status === 402) {
    const offers = (answer.required?.accepts ?? []).map((offer) => `${offer.network} ${offer.asset} ${offer.amount} ${offer.payTo}`);
    return `402 ${answer.required?.error} ${answer.required?.resource?.description} [${offers.join(", ")}]`;
  }
  if (answer.status === 200) return `200 (${answer.rows ?? "?"} rows)`;
  return `${answer.status} ${answer.text.replaceAll(selector, "<row>")}`;
}

/** Signs a payment for one of the 402's offers. */
async function sign(rng: Random, required: PaymentRequired): Promise<unknown> {
  return payer.sign({ ...required, accepts: [rng.pick(required.accepts)] });
}

const quotes = new Map<string, Promise<PaymentRequired | null>>();

/** The 402 of a plain query of `table` (any payment for its offers will do where the query is refused before payment). */
function plainQuote(table: string): Promise<PaymentRequired | null> {
  let quote = quotes.get(table);
  if (quote === undefined) {
    quote = unlessSlow(() => exchange(sealed.origin, requestFor("http", `SELECT id FROM ${table} LIMIT 5`), sealed.boundMs)).then((result) => answerOf("http", result).required ?? null);
    quotes.set(table, quote);
  }
  return quote;
}

/** A probe pair: unpaid for both rows, then paid for one or both. */
async function probeCase(rng: Random, index: number): Promise<FuzzCase> {
  const shape = probe(rng, MAX_ROWS);
  const transport: Transport = rng.chance(0.2) ? "mcp" : "http";
  const [first, second] = shape.rows;
  const payBoth = rng.chance(0.3);
  const payFirst = payBoth || rng.chance(0.5);
  const refusedPaid = rng.chance(0.3);
  const fuzzCase: FuzzCase = {
    kind: `oracle/probe-${transport}`,
    server: sealed,
    request: requestFor(transport, shape.sql(first)),
    note: `${shape.table}; ${shape.shape}; rows ${first} and ${second}`,
  };
  const name = `case #${index} (${fuzzCase.note})`;
  fuzzCase.extra = async (result) => {
    const problems = mcpProblems(transport, result, shape.sql(first));
    const answers = [answerOf(transport, result)];
    answers.push((await send(`unpaid, row ${second}`, transport, requestFor(transport, shape.sql(second)), shape.sql(second), problems)).answer);
    if (answers.some(busy) || answers.some((answer) => typeof answer.status === "string")) return problems;
    const views = answers.map((answer, i) => pairView(answer, shape.selector(shape.rows[i]!)));
    if (views[0] !== views[1]) problems.push(`the unpaid answers depend on the row the probe targets:\n    row ${first}: ${views[0]!.slice(0, 400)}\n    row ${second}: ${views[1]!.slice(0, 400)}`);
    for (const [i, answer] of answers.entries()) {
      const row = shape.rows[i]!;
      const sql = shape.sql(row);
      if (answer.status === 200) problems.push(`row ${row}: an unpaid 200 on a paid table`);
      if (answer.status === 402 && shape.table !== "slow_vault") {
        // SQLite itself must not fail on a quoted query's data: that failure would come after /verify.
        const read = local.rows(sql);
        if ("error" in read) problems.push(`row ${row}: SQLite fails on this query's data (${read.error}), yet it was quoted (402) instead of refused before payment`);
      }
      const pay = i === 0 ? payFirst : payBoth || !payFirst;
      if (!pay) continue;
      if (answer.status === 402 && answer.required !== undefined) {
        const paid = (await send(`paid, row ${row}`, transport, requestFor(transport, sql, await sign(rng, answer.required)), sql, problems)).answer;
        if (paid.status === 400) checkPaidFailure(`paid, row ${row}`, name, paid, problems);
        if (paid.status === 402) problems.push(`paid, row ${row}: a payment signed for the quote was refused: ${JSON.stringify(paid.required?.error ?? paid.text).slice(0, 300)}`);
        if (paid.status === 200 && paid.rows !== undefined) {
          const read = local.rows(sql);
          if ("rows" in read && read.rows.length !== paid.rows) problems.push(`paid, row ${row}: ${paid.rows} rows delivered, SQLite gives ${read.rows.length}`);
        }
      } else if (answer.status === 400 && refusedPaid) {
        // A payment changes nothing for a query refused before payment: the same words, nothing verified.
        const required = await plainQuote(shape.table);
        if (required === null) continue;
        const paid = (await send(`paid though refused, row ${row}`, transport, requestFor(transport, sql, await sign(rng, required)), sql, problems)).answer;
        if (!busy(paid) && (paid.status !== 400 || paid.text !== answer.text)) problems.push(`paid though refused, row ${row}: ${paid.status} ${JSON.stringify(paid.text.slice(0, 300))}, not the unpaid refusal ${JSON.stringify(answer.text.slice(0, 300))}`);
      }
    }
    return problems;
  };
  return fuzzCase;
}

/** LIMIT n OFFSET k for two values of k: over max_rows a 400 before payment with one text; within, SQLite's rows. */
async function offsetCase(rng: Random, index: number): Promise<FuzzCase> {
  const shape = offsetProbe(rng, MAX_ROWS);
  const [k1, k2] = shape.offsets;
  const pay = rng.chance(0.5);
  const fuzzCase: FuzzCase = {
    kind: `oracle/offset-${shape.limit > MAX_ROWS ? "over" : "within"}`,
    server: sealed,
    request: requestFor("http", shape.sql(k1)),
    note: `${shape.table}; ${shape.form}; LIMIT ${shape.limit}, OFFSET ${k1} and ${k2}`,
  };
  const name = `case #${index} (${fuzzCase.note})`;
  fuzzCase.extra = async (result) => {
    const problems: string[] = [];
    const first = answerOf("http", result);
    const second = (await send(`OFFSET ${k2}`, "http", requestFor("http", shape.sql(k2)), shape.sql(k2), problems)).answer;
    if (busy(first) || busy(second) || typeof first.status === "string") return problems;
    if (shape.limit > MAX_ROWS) {
      for (const [k, answer] of [[k1, first], [k2, second]] as const) {
        if (answer.status !== 400) problems.push(`OFFSET ${k}: LIMIT ${shape.limit} is over max_rows (${MAX_ROWS}) but the answer is ${answer.status}, not a 400 before payment`);
      }
      if (first.status === 400 && second.status === 400 && first.text !== second.text) {
        problems.push(`the refusal of LIMIT ${shape.limit} depends on the OFFSET:\n    OFFSET ${k1}: ${first.text.slice(0, 300)}\n    OFFSET ${k2}: ${second.text.slice(0, 300)}`);
      }
      return problems;
    }
    if (first.status !== second.status) problems.push(`LIMIT ${shape.limit}: OFFSET ${k1} got ${first.status}, OFFSET ${k2} got ${second.status}`);
    if (first.status === 400 && /LIMIT of at most/.test(first.text)) problems.push(`LIMIT ${shape.limit} is within max_rows (${MAX_ROWS}) but was refused: ${first.text.slice(0, 300)}`);
    if (!pay || first.status !== 402 || first.required === undefined) return problems;
    const sql = shape.sql(k1);
    const paid = (await send(`paid, OFFSET ${k1}`, "http", requestFor("http", sql, await sign(rng, first.required)), sql, problems)).answer;
    if (paid.status === 400) checkPaidFailure(`paid, OFFSET ${k1}`, name, paid, problems);
    if (paid.status === 200 && paid.rows !== undefined) {
      if (paid.rows > Math.min(shape.limit, MAX_ROWS)) problems.push(`paid, OFFSET ${k1}: ${paid.rows} rows for LIMIT ${shape.limit} (max_rows ${MAX_ROWS})`);
      // journal grows and shrinks while replay cases run: its rows are compared only with the LIMIT.
      const read = shape.table === "journal" ? null : local.rows(sql);
      if (read !== null && "rows" in read && read.rows.length !== paid.rows) problems.push(`paid, OFFSET ${k1}: ${paid.rows} rows delivered, SQLite gives ${read.rows.length}`);
    }
    return problems;
  };
  return fuzzCase;
}

/** The same SQL in another correct encoding: the same resource (DESIGN.md §17 "One SQL is one resource"). */
function otherEncoding(rng: Random, sql: string): string {
  const encoded = encodeURIComponent(sql);
  return `/api/query?query=${rng.pick([encoded.replaceAll("%20", "+"), encoded.replaceAll("*", "%2A").replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()), encodeURI(sql).replaceAll("&", "%26").replaceAll("#", "%23").replaceAll("+", "%2B").replaceAll("=", "%3D").replaceAll("?", "%3F")])}`;
}

/**
 * Pays for a read of the case's own journal rows, then presents the same PAYMENT-SIGNATURE again
 * while writing to those rows: each presentation gets the very bytes paid for, or a 402.
 */
async function replayCase(rng: Random, index: number): Promise<FuzzCase> {
  const slot = journalSlot(index);
  const present = new Map<number, string>();
  const setRow = async (id: number, note: string) => {
    await writer.run("INSERT OR REPLACE INTO journal VALUES (?1, ?2, ?3)", id, note, id % 97);
    present.set(id, note);
  };
  const clearSlot = () => writer.run(`DELETE FROM journal WHERE id BETWEEN ${slot[0]} AND ${slot.at(-1)}`);
  // Rows written before the payment: the answer paid for holds some of the case's own rows.
  await clearSlot();
  for (const id of slot.slice(0, rng.int(0, 3))) await setRow(id, `case ${index} row ${id}`);
  const initial = new Map(present);
  const sql = journalQuery(rng, slot, MAX_ROWS);
  const format = rng.weighted<[string, string][]>([
    [6, []],
    [1, [["Accept", "text/csv"]]],
    [1, [["Accept", "application/json"]]],
  ]);
  const steps = rng.int(1, 6);
  const plan = Array.from({ length: steps }, () => ({
    write: rng.weighted<"none" | "insert" | "delete" | "update" | "restore">([
      [3, "none"],
      [2, "insert"],
      [1, "delete"],
      [1, "update"],
      [2, "restore"],
    ]),
    row: rng.pick(slot),
    as: rng.weighted<"same" | "encoding" | "format" | "resource">([
      [14, "same"],
      [3, "encoding"],
      [2, "format"],
      [1, "resource"],
    ]),
    otherTarget: "",
  }));
  for (const step of plan) if (step.as === "encoding") step.otherTarget = otherEncoding(rng, sql);
  const otherSql = journalQuery(rng, slot, MAX_ROWS);
  const unpaid: FuzzRequest = { method: "GET", target: target(sql), headers: [...format] };
  const fuzzCase: FuzzCase = { kind: "oracle/replay", server: sealed, request: unpaid, note: `${steps} presentations; ${plan.map((step) => `${step.write} ${step.row}, ${step.as}`).join("; ")}` };
  fuzzCase.extra = async (result) => {
    const problems: string[] = [];
    try {
      const quote = answerOf("http", result);
      if (quote.status !== 402 || quote.required === undefined) return problems;
      const header = Buffer.from(JSON.stringify(await sign(rng, quote.required))).toString("base64");
      const paidRequest: FuzzRequest = { ...unpaid, headers: [...format, ["PAYMENT-SIGNATURE", header]] };
      const paid = await send("paid", "http", paidRequest, sql, problems);
      if (paid.answer.status === 400) checkPaidFailure("paid", `case #${index}`, paid.answer, problems);
      if (paid.result.kind !== "response" || paid.result.response.status !== 200) return problems;
      const bought = paid.result.response.body;
      const transaction = paid.result.response.headers["payment-response"];
      const rowsBought = JSON.stringify(local.rows(sql), (_, value) => (typeof value === "bigint" ? String(value) : value));
      let counted = 0;
      let served = 0;
      for (const [i, step] of plan.entries()) {
        if (step.write === "insert") await setRow(step.row, `inserted by case ${index} step ${i}`);
        if (step.write === "update" && present.has(step.row)) await setRow(step.row, `updated by case ${index} step ${i}`);
        if (step.write === "delete" && present.has(step.row)) {
          await writer.run("DELETE FROM journal WHERE id = ?1", step.row);
          present.delete(step.row);
        }
        if (step.write === "restore") {
          await clearSlot();
          present.clear();
          for (const [id, note] of initial) await setRow(id, note);
        }
        const unchanged = JSON.stringify(local.rows(sql), (_, value) => (typeof value === "bigint" ? String(value) : value)) === rowsBought;
        const request: FuzzRequest =
          step.as === "encoding" ? { ...paidRequest, target: step.otherTarget }
          : step.as === "format" ? { ...paidRequest, headers: [["Accept", format.length === 0 ? "text/csv" : "application/vnd.apache.arrow.stream"], ["PAYMENT-SIGNATURE", header]] }
          : step.as === "resource" ? { ...paidRequest, target: target(otherSql) }
          : paidRequest;
        const label = `presented again (${i + 1}/${steps}: ${step.write} ${step.row}, ${step.as})`;
        const again = (await send(label, "http", request, step.as === "resource" ? otherSql : sql, problems)).result;
        const replayable = step.as === "same" || step.as === "encoding" || (step.as === "resource" && otherSql === sql);
        const countedBefore = counted;
        if (again.kind !== "response" || busy(answerOf("http", again))) continue;
        if (replayable && counted < MAX_REPLAYS) counted++;
        const { status, body, headers } = again.response;
        const text = new TextDecoder().decode(body);
        if (status === 200) {
          served++;
          if (Buffer.compare(Buffer.from(body), Buffer.from(bought)) !== 0) problems.push(`${label}: a 200 with other bytes than the answer paid for (${body.length} bytes, paid for ${bought.length}): ${text.slice(0, 200)}`);
          if (headers["payment-response"] !== transaction) problems.push(`${label}: a 200 whose PAYMENT-RESPONSE is not the payment's settlement`);
          if (!replayable) problems.push(`${label}: served for another format or resource`);
          if (countedBefore >= MAX_REPLAYS) problems.push(`${label}: served after ${MAX_REPLAYS} replays (limits.max_replays)`);
          if (!unchanged) problems.push(`${label}: served the answer paid for although its rows have changed since`);
        } else if (status === 402) {
          if (/inserted by case|updated by case/.test(text)) problems.push(`${label}: the 402 holds rows written after the payment`);
          if (replayable && unchanged && countedBefore < MAX_REPLAYS) problems.push(`${label}: the rows are as they were paid for, yet the replay was refused: ${parseJson(text)?.error ?? text.slice(0, 200)}`);
        } else if (status === 400) {
          checkPaidFailure(label, `case #${index}`, answerOf("http", again), problems);
        }
      }
      if (served > MAX_REPLAYS) problems.push(`one payment served again ${served} times, over max_replays (${MAX_REPLAYS})`);
      return problems;
    } finally {
      await clearSlot();
    }
  };
  return fuzzCase;
}

test(`probes, OFFSET probes and replays on tables whose quotes tell nothing (${COUNT} cases, seed ${settings.seed})`, async () => {
  run = new FuzzRun("oracles", settings, env);
  const kinds: [number, (rng: Random, index: number) => Promise<FuzzCase>][] = [
    [5, probeCase],
    [2, offsetCase],
    [2, replayCase],
  ];
  await run.run(COUNT, (rng, index) => rng.weighted(kinds)(rng, index));
  console.log(`oracle fuzz, seed ${settings.seed}: ${run.summary()}`);
  console.log(`oracle fuzz, seed ${settings.seed}, later requests: ${[...tally].sort().map(([key, n]) => `${key}: ${n}`).join(", ")}`);
  run.assertClean();
}, 600_000);

test("every failure after /verify on those tables got one and the same text", () => {
  if (failureTexts.size > 1) {
    const texts = [...failureTexts].map(([text, first]) => `  ${JSON.stringify(text.slice(0, 300))} (first: ${first})`).join("\n");
    throw new Error(`seed ${settings.seed}: ${failureTexts.size} different texts for failures after /verify:\n${texts}`);
  }
  console.log(`oracle fuzz, seed ${settings.seed}: failures after /verify answered with ${failureTexts.size} text(s)`);
});

test("the payer's balance moved by exactly what was delivered, and the ledgers record exactly that", async () => {
  const problems = await checkMoney({ env, payer: payer.address, before, receipts: run.receipts, outageKeys: new Set(), untouched: [] });
  if (problems.length > 0) throw new Error(`seed ${settings.seed} (ARROW402_FUZZ_SEED=${settings.seed} bun test tests/fuzz/oracles.test.ts):\n${problems.join("\n")}`);
}, 120_000);
