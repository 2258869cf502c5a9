/**
 * Runs fuzz cases against the servers and collects every failure with what it takes to replay it:
 * the seed, the case index, and the exact request. Each case draws from its own random stream
 * (seed, file, index), so cases run concurrently and a single case can be run alone with
 * `ARROW402_FUZZ_CASE=<index>`. After every batch each server must still answer `GET /api/`, and
 * nothing may have logged an unexpected error.
 */
import { describeRequest, exchange, type Exchange, type FuzzRequest } from "./raw-http.ts";
import { checkExchange, type Receipt } from "./oracle.ts";
import { Random, type FuzzSettings } from "./random.ts";
import type { FuzzEnvironment, FuzzServer } from "./environment.ts";

export interface FuzzCase {
  /** Generator that made it, e.g. "sql/mutated". */
  kind: string;
  server: FuzzServer;
  request: FuzzRequest;
  /** A staged facilitator failure: 500 is documented (DESIGN.md §6 step 5). */
  outage?: boolean;
  /** The payment cannot pay: no 200 with a settlement. */
  mustRefuse?: string;
  /** Close the connection this long after sending, as a client that gives up (nothing to check but the server). */
  abandonAfterMs?: number;
  /** What the case did, for the failure message (e.g. how the payment was altered). */
  note?: string;
  /** Checks of the file's own (e.g. the MCP answer), given the exchange. */
  extra?: (result: Exchange) => string[] | Promise<string[]>;
}

/** Sends again while the server turns the request away for being busy (429, 503 with Retry-After), a while at most. */
export async function unlessBusy(send: () => Promise<Exchange>): Promise<Exchange> {
  for (let attempt = 0; ; attempt++) {
    const result = await send();
    const busy = result.kind === "response" && (result.response.status === 429 || result.response.status === 503) && result.response.headers["retry-after"] !== undefined;
    if (!busy || attempt >= 50) return result;
    await Bun.sleep(100);
  }
}

/**
 * A validation that ran out of time (LIMITS.validationTimeoutMs, a 400 over HTTP and in an MCP
 * refusal): on a loaded machine a plain query can miss the deadline, the first in a new validator most.
 */
export const VALIDATION_DEADLINE = /too complex to validate within \d+ ms/;
/** A query, or a quote's count, stopped at the time limit (the tight server's is 25 ms): as likely on a loaded machine. */
const TIME_LIMIT = /ran longer than the \d+ ms limit/;

/**
 * Whether the answer is a refusal that a less loaded machine would not have given: for time, or an
 * MCP tool refused as busy (429, 503 inside a 200, which unlessBusy does not see).
 */
export function refusedForLoad(result: Exchange): boolean {
  if (result.kind !== "response" || (result.response.status !== 400 && result.response.status !== 200)) return false;
  const text = new TextDecoder().decode(result.response.body.subarray(0, 4096));
  const toolStatus = /"structuredContent":\{"status":(\d+)/.exec(text)?.[1];
  return VALIDATION_DEADLINE.test(text) || TIME_LIMIT.test(text) || toolStatus === "429" || toolStatus === "503";
}

/**
 * For a request whose answer a case needs (a quote): sent again while busy, or while it is refused
 * for load, waiting longer each time (about 15 s in all). After a query is stopped at the time limit
 * its worker is replaced, and the fresh worker's start counts against the query it is handed: on the
 * tight server (25 ms) a quote can meet the limit several times in a row while other cases run.
 */
export async function unlessSlow(send: () => Promise<Exchange>): Promise<Exchange> {
  for (let attempt = 0; ; attempt++) {
    const result = await unlessBusy(send);
    if (!refusedForLoad(result) || attempt >= 20) return result;
    await Bun.sleep(Math.min(100 * 2 ** attempt, 1_000));
  }
}

export type Planner = (rng: Random, index: number) => FuzzCase | Promise<FuzzCase>;

const BATCH = 100;
const ALIVE_TIMEOUT_MS = 10_000;

export class FuzzRun {
  readonly failures: string[] = [];
  readonly receipts: (Receipt & { server: string })[] = [];
  readonly statuses = new Map<string, number>();
  /** Requests whose answers the oracle judged: each case's first and those its checks sent. */
  judged = 0;
  private readonly inFlight = new Map<number, string>();

  constructor(
    readonly file: string,
    readonly settings: FuzzSettings,
    readonly env: FuzzEnvironment,
  ) {}

  /** How to run this file again with the same seed (and only one case). */
  replay(index?: number): string {
    const only = index === undefined ? "" : ` ARROW402_FUZZ_CASE=${index}`;
    return `ARROW402_FUZZ_SEED=${this.settings.seed}${only} bun test tests/fuzz/${this.file}.test.ts`;
  }

  /** Runs `count` cases from `plan`, `concurrency` at a time, checking the servers after each batch. */
  async run(count: number, plan: Planner, concurrency = 6): Promise<void> {
    const only = process.env.ARROW402_FUZZ_CASE;
    const indexes = only === undefined || only === "" ? Array.from({ length: count }, (_, i) => i) : [Number(only)].filter((i) => i < count);
    const restore = this.watchLogs();
    try {
      for (let start = 0; start < indexes.length; start += BATCH) {
        const batch = indexes.slice(start, start + BATCH);
        let next = 0;
        const worker = async () => {
          while (next < batch.length) {
            const index = batch[next++]!;
            await this.runOne(index, plan);
          }
        };
        await Promise.all(Array.from({ length: concurrency }, worker));
        await this.checkAlive(`after cases ${batch[0]}–${batch.at(-1)}`);
      }
    } finally {
      restore();
    }
  }

  private async runOne(index: number, plan: Planner): Promise<void> {
    let fuzzCase: FuzzCase;
    try {
      fuzzCase = await plan(Random.derive(this.settings.seed, `${this.file}#${index}`), index);
    } catch (error) {
      this.failures.push(`${this.header(index, "plan")}\n  the case could not be prepared: ${String(error)}`);
      return;
    }
    this.inFlight.set(index, fuzzCase.kind);
    try {
      const result = await this.send(fuzzCase);
      const problems = this.verify(fuzzCase, result);
      try {
        problems.push(...((await fuzzCase.extra?.(result)) ?? []));
      } catch (error) {
        // The case's own checks failed to run (e.g. its writes to the data file): a failure of this case, not of the run.
        problems.push(`the case's checks could not run: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      }
      const key = result.kind === "response" ? `${fuzzCase.kind} ${result.response.status}` : `${fuzzCase.kind} ${result.kind}`;
      this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
      if (problems.length > 0) this.failures.push(this.describe(index, fuzzCase, result, problems));
    } finally {
      this.inFlight.delete(index);
    }
  }

  /** The oracle's problems with one exchange of a case (its first, or one its `extra` made); records its receipts. */
  verify(fuzzCase: Pick<FuzzCase, "request" | "server" | "outage" | "mustRefuse">, result: Exchange): string[] {
    this.judged++;
    const verdict = checkExchange({ request: fuzzCase.request, server: fuzzCase.server, outage: fuzzCase.outage, mustRefuse: fuzzCase.mustRefuse }, result, this.env.reads);
    this.receipts.push(...verdict.receipts.map((receipt) => ({ ...receipt, server: fuzzCase.server.name })));
    return verdict.problems;
  }

  /** One exchange with a server, within its bound. */
  send(fuzzCase: FuzzCase): Promise<Exchange> {
    return exchange(fuzzCase.server.origin, fuzzCase.request, fuzzCase.server.boundMs, fuzzCase.abandonAfterMs);
  }

  /** Every server still answers `GET /api/` with 200, and every subprocess still runs. */
  async checkAlive(when: string): Promise<void> {
    for (const server of this.env.servers()) {
      if (!server.alive()) {
        this.failures.push(`[seed ${this.settings.seed}, ${this.file}] the ${server.name} server process died ${when}:\n${server.output().slice(-3000)}`);
        continue;
      }
      const result = await exchange(server.origin, { method: "GET", target: "/api/", headers: [] }, ALIVE_TIMEOUT_MS);
      if (result.kind !== "response" || result.response.status !== 200) {
        const what = result.kind === "response" ? `status ${result.response.status}` : result.kind;
        this.failures.push(`[seed ${this.settings.seed}, ${this.file}] the ${server.name} server no longer answers GET /api/ ${when} (${what})`);
      }
    }
  }

  /** Records every "unexpected error" the in-process servers log, with the cases running at the time. */
  private watchLogs(): () => void {
    const original = console.error;
    console.error = (...args: unknown[]) => {
      const line = args.map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : String(arg))).join(" ");
      if (/unexpected error/i.test(line)) {
        const running = [...this.inFlight].map(([index, kind]) => `#${index} (${kind})`).join(", ");
        this.failures.push(`[seed ${this.settings.seed}, ${this.file}] a server logged an unexpected error while cases ${running || "(none)"} ran: ${line.slice(0, 600)}`);
      }
      original(...args);
    };
    return () => {
      console.error = original;
    };
  }

  /** Unexpected errors a subprocess printed. */
  checkProcessLog(): void {
    const server = this.env.process;
    if (server === null) return;
    const lines = server.output().split("\n").filter((line) => /unexpected error|panic|Segmentation|uncaught/i.test(line));
    if (lines.length > 0) this.failures.push(`[seed ${this.settings.seed}, ${this.file}] the ${server.name} server printed:\n${lines.slice(0, 20).join("\n")}`);
  }

  private header(index: number, kind: string): string {
    return `[seed ${this.settings.seed}, ${this.file} case #${index} (${kind})] replay: ${this.replay(index)}`;
  }

  private describe(index: number, fuzzCase: FuzzCase, result: Exchange, problems: string[]): string {
    let answer: string;
    if (result.kind === "response") {
      const { status, headers, body, elapsedMs } = result.response;
      const text = new TextDecoder().decode(body.subarray(0, 400));
      answer = `→ ${status} ${headers["content-type"] ?? "(no content type)"} in ${elapsedMs} ms: ${JSON.stringify(text)}`;
    } else {
      answer = `→ ${result.kind} after ${result.elapsedMs} ms`;
    }
    const notes = [fuzzCase.outage ? "staged facilitator failure" : "", fuzzCase.mustRefuse ? `must refuse: ${fuzzCase.mustRefuse}` : "", fuzzCase.note ?? ""].filter(Boolean).join("; ");
    return [
      `${this.header(index, fuzzCase.kind)} on ${fuzzCase.server.name}${notes ? ` [${notes}]` : ""}`,
      `  ${describeRequest(fuzzCase.request)}`,
      `  ${answer}`,
      ...problems.map((problem) => `  - ${problem}`),
    ].join("\n");
  }

  /** A summary of answers per generator and status, for the test log. */
  summary(): string {
    return `${this.judged} requests judged; ` + [...this.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${key}: ${n}`).join(", ");
  }

  /** Throws with the first failures (all of them counted) when there are any. */
  assertClean(): void {
    if (this.failures.length === 0) return;
    const shown = this.failures.slice(0, 15).join("\n\n");
    throw new Error(`${this.failures.length} fuzz failure(s), seed ${this.settings.seed} (${this.replay()}):\n\n${shown}${this.failures.length > 15 ? `\n\n… and ${this.failures.length - 15} more` : ""}`);
  }
}
