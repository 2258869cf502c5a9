/**
 * `arrow402 query URL "SQL"`: runs a query on any arrow402 server and pays for it within the
 * limits the user set (x402 V2 buyer side, ARCHITECTURE.md §6). Data goes to stdout or --output; the
 * quote, the payment receipt and errors go to stderr, so stdout stays the data.
 *
 * The budget is the buyer's truth: a token's decimals and symbol come from what the buyer knows —
 * the built-in tokens, `--token-decimals`, or the token contract read through `--rpc` /
 * `ARROW402_RPC` — never from the server (src/client/tokens.ts). An offer in a token that cannot be
 * verified is never paid under `--max-amount`; without one it is shown in smallest units, exactly
 * what would be signed.
 *
 * `--format arrow` and `parquet` write the server's own bytes, asked for with `Accept`; `table`,
 * `csv`, `json` and `ndjson` are rendered here from the Arrow stream (src/client/format/index.ts).
 * Every request accepts zstd or gzip, decompressed as it arrives (src/client/content-coding.ts).
 *
 * Nothing from the server is trusted to be small or printable (DESIGN §17): the answer is read
 * under `--max-bytes` (as sent and once decompressed) and written to a file as it arrives — beside
 * `--output`, renamed over it when complete, or in the temporary directory on the way to stdout
 * (src/client/staging.ts) — then checked and rendered a batch at a time; every line on stderr and
 * every value rendered as text is printed without control characters (src/client/printable.ts).
 *
 * Exit codes (one per kind of failure, so scripts can tell them apart):
 *
 * | code | meaning |
 * |---|---|
 * | 0 | ok: the data was written (after paying, if the table is paid) |
 * | 1 | runtime failure: the server cannot be reached or the connection broke, an unexpected answer, or one over --max-bytes |
 * | 2 | bad usage: arguments, or the signing key variable missing or malformed |
 * | 3 | bad query: the server refused the SQL (400); its message is shown |
 * | 4 | not paid: over --max-amount, a token whose decimals cannot be verified, not confirmed, no offer this key may pay, or a quote for another format than asked; nothing was paid |
 * | 5 | payment refused: the payment was sent and the server answered 402 (not verified or not settled) |
 * | 6 | server error (5xx) |
 */
import { DEFAULT_MAX_BYTES, parseByteSize } from "../client/byte-size.ts";
import type { FailureKind } from "../client/failure.ts";
import { parse, UsageError } from "./args.ts";
import { defaultFormat, FORMATS, isBinary, isFormat, mediaTypeFor, render, type OutputFormat, type Rendered } from "../client/format/index.ts";
import { parseNetworks } from "../client/networks.ts";
import { parseBudget, type Budget } from "../client/offers.ts";
import { fetchPaid, mediaType, type Payment } from "../client/paid-query.ts";
import { createPayer } from "../client/payer.ts";
import { printable } from "../client/printable.ts";
import { endpoints, parseServerUrl } from "../client/server-url.ts";
import { DEFAULT_KEY_ENV, redact } from "../client/signer.ts";
import { stage, type Staging } from "../client/staging.ts";
import { askYesNo, downloadProgress } from "../client/terminal.ts";
import { parseTokenSources, type TokenSources } from "../client/token-verification.ts";
import { formatPrice } from "../client/tokens.ts";

export const EXIT = { ok: 0, runtime: 1, usage: 2, badQuery: 3, notPaid: 4, refused: 5, server: 6 } as const;

export const EXIT_FOR: Readonly<Record<FailureKind, number>> = {
  network: EXIT.runtime,
  runtime: EXIT.runtime,
  usage: EXIT.usage,
  "bad-query": EXIT.badQuery,
  declined: EXIT.notPaid,
  refused: EXIT.refused,
  server: EXIT.server,
};

export interface QueryArgs {
  url: string;
  sql: string;
  format?: string;
  output?: string;
  maxAmount?: string;
  yes: boolean;
  keyEnv?: string;
  network: string[];
  /** `NETWORK=URL` entries (with ARROW402_RPC from the environment). */
  rpc?: string[];
  /** `[NETWORK:]ADDRESS=DECIMALS` entries. */
  tokenDecimals?: string[];
  /** The largest answer accepted, e.g. `500MB` (default DEFAULT_MAX_BYTES). */
  maxBytes?: string;
}

const OPTIONS = {
  format: { type: "string", short: "f" },
  output: { type: "string", short: "o" },
  "max-amount": { type: "string" },
  yes: { type: "boolean", short: "y" },
  "key-env": { type: "string" },
  network: { type: "string", multiple: true },
  rpc: { type: "string", multiple: true },
  "token-decimals": { type: "string", multiple: true },
  "max-bytes": { type: "string" },
} as const;

/** `arrow402 query …` from its command-line arguments; a UsageError for malformed ones. */
export function queryCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, 2);
  const [url, sql] = positionals;
  if (url === undefined || sql === undefined) {
    throw new UsageError('query needs the server\'s URL and the SQL: arrow402 query URL "SELECT … FROM table"');
  }
  const { yes, network, rpc, "token-decimals": tokenDecimals, "max-amount": maxAmount, "key-env": keyEnv, format, output, "max-bytes": maxBytes } = values;
  return query({
    url,
    sql,
    yes: yes ?? false,
    network: network ?? [],
    rpc: rpc ?? [],
    tokenDecimals: tokenDecimals ?? [],
    ...(maxAmount === undefined ? {} : { maxAmount }),
    ...(keyEnv === undefined ? {} : { keyEnv }),
    ...(format === undefined ? {} : { format }),
    ...(output === undefined ? {} : { output }),
    ...(maxBytes === undefined ? {} : { maxBytes }),
  });
}

export async function query(args: QueryArgs, env: Record<string, string | undefined> = process.env): Promise<number> {
  const keyEnv = args.keyEnv ?? DEFAULT_KEY_ENV;
  // Nothing this command prints may contain the key, whatever goes wrong, nor a control
  // character from the network that could rewrite what the terminal shows.
  const say = (line: string) => void process.stderr.write(`${printable(redact(line, env[keyEnv]))}\n`);
  const fail = (code: number, message: string) => {
    say(`arrow402: ${message}`);
    return code;
  };

  const checked = checkArgs(args, env);
  if (!checked.ok) return fail(EXIT.usage, checked.reason);
  // Before any request, so that a place the answer cannot be written costs no payment.
  const staged = stage(checked.output);
  if (!staged.ok) return fail(EXIT.usage, staged.reason);
  try {
    return await fetchAndWrite(args, checked, staged.staging, { env, keyEnv, say, fail });
  } finally {
    staged.staging.cleanup();
  }
}

interface Io {
  env: Record<string, string | undefined>;
  keyEnv: string;
  say(line: string): void;
  fail(code: number, message: string): number;
}

async function fetchAndWrite(args: QueryArgs, checked: Valid, staging: Staging, { env, keyEnv, say, fail }: Io): Promise<number> {
  const { base, format, output, budget, networks, sources, maxBytes } = checked;
  const progress = downloadProgress(process.stderr.isTTY === true);
  const wanted = mediaTypeFor(format);
  const fetched = await fetchPaid(endpoints.query(base, args.sql), {
    accept: wanted,
    decide: createPayer({
      base,
      networks,
      budget,
      yes: args.yes,
      sources,
      interactive: process.stdin.isTTY === true,
      ask: askYesNo,
      tell: say,
      env,
      keyEnv,
    }),
    onProgress: progress.update,
    onRetry: (attempt, reason) => say(`arrow402: ${reason}; sending the same payment again (attempt ${attempt + 1})`),
    maxBytes,
    overBoundAdvice: "pass a larger --max-bytes if an answer this large is expected",
    toFile: staging.body,
  });
  progress.done();
  if (!fetched.ok) return fail(EXIT_FOR[fetched.failure.kind], fetched.failure.message);
  if (fetched.payment !== null) say(describePayment(fetched.payment));

  if (fetched.contentType !== null && mediaType(fetched.contentType) !== wanted) {
    return fail(EXIT.runtime, `the server answered with ${fetched.contentType.slice(0, 100)} instead of ${wanted}; nothing was written`);
  }
  let rendered: Rendered;
  try {
    rendered = await render(format, staging.body, { exact: staging.regularFile });
  } catch (error) {
    const what = format === "parquet" ? "a Parquet file" : "an Arrow IPC stream";
    return fail(EXIT.runtime, `the server's answer is not ${what}: ${(error as Error).message}`);
  }
  try {
    await staging.deliver(rendered.chunks, isBinary(format));
  } catch (error) {
    return fail(EXIT.runtime, `cannot write ${output ?? "the output"}: ${(error as Error).message}`);
  }
  if (output !== null || format !== "table") {
    say(`${rendered.rowCount} row${rendered.rowCount === 1 ? "" : "s"} written${output === null ? "" : ` to ${output}`} (${format})`);
  }
  return EXIT.ok;
}

interface Valid {
  ok: true;
  base: string;
  format: OutputFormat;
  output: string | null;
  budget: Budget | null;
  networks: string[];
  sources: TokenSources;
  maxBytes: number;
}

type Checked = Valid | { ok: false; reason: string };

function checkArgs(args: QueryArgs, env: Record<string, string | undefined>): Checked {
  const server = parseServerUrl(args.url);
  if (!server.ok) return server;
  if (args.sql.trim() === "") return { ok: false, reason: 'the query is empty: arrow402 query URL "SELECT … FROM table"' };
  if (args.format !== undefined && !isFormat(args.format)) {
    return { ok: false, reason: `--format '${args.format}' is not one of ${FORMATS.join(", ")}` };
  }
  const output = args.output ?? null;
  const format = args.format ?? defaultFormat(output, process.stdout.isTTY === true);
  if (isBinary(format) && output === null && process.stdout.isTTY === true) {
    const name = format === "parquet" ? "Parquet" : "Arrow";
    return { ok: false, reason: `${name} is binary and stdout is a terminal: use --output FILE, a pipe, or --format table` };
  }
  let budget: Budget | null = null;
  if (args.maxAmount !== undefined) {
    budget = parseBudget(args.maxAmount);
    if (budget === null) return { ok: false, reason: `--max-amount '${args.maxAmount}' is not a decimal amount of token units, e.g. 0.05` };
  }
  const maxBytes = args.maxBytes === undefined ? DEFAULT_MAX_BYTES : parseByteSize(args.maxBytes);
  if (maxBytes === null) return { ok: false, reason: `--max-bytes '${args.maxBytes}' is not a size: write bytes, or e.g. 500MB, 2GiB` };
  const networks = parseNetworks(args.network);
  if (!networks.ok) return networks;
  const sources = parseTokenSources(args.rpc ?? [], args.tokenDecimals ?? [], env);
  if (!sources.ok) return sources;
  return { ok: true, base: server.base, format, output, budget, networks: networks.networks, sources: sources.sources, maxBytes };
}

function describePayment(payment: Payment): string {
  const price = formatPrice(payment.offer.amount, payment.offer.token);
  const recovered = payment.resends > 0 ? ` (answer recovered after ${payment.resends} resend${payment.resends === 1 ? "" : "s"}; paid once)` : "";
  const { receipt } = payment;
  if (receipt === null) return `Paid ${price} to ${payment.offer.requirement.payTo}; the server sent no PAYMENT-RESPONSE${recovered}`;
  return `Paid ${price} to ${payment.offer.requirement.payTo}; transaction ${receipt.transaction} on ${receipt.network}${recovered}`;
}
