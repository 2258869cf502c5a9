/**
 * The buyer's budget against a seller that lies about its token (lying-server.ts): the devnet's
 * real test token (6 decimals, symbol "tUSDC") claimed as 18-decimal "USDC", quoted at 5×10^16
 * smallest units — "0.05" if believed, 5×10^10 tokens in truth. The CLI runs as a subprocess; the
 * payer holds more than the lie, and the lying server settles any signature it receives, so a
 * payment wrongly signed would be a real transfer: "nothing signed" is checked both by the
 * signatures the server saw and by the payer's balance on chain.
 *
 * The same liar is hostile in what it answers (hostile-answers.ts, DESIGN §17): escape sequences
 * in names, values and messages must reach the terminal as visible text, and no answer — a
 * decompression bomb, a body that never ends — may grow the client's memory past a bound; the
 * memory is the CLI process's peak RSS, measured by GNU time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDevnet, type Devnet } from "../../devnet/index.ts";
import { readTokenContract } from "../../src/client/token-contract.ts";
import { GNU_TIME, runCli, runCliMeasured } from "../client/cli.ts";
import { fundedAccount } from "../payment/devnet-token.ts";
import { tempDir } from "../support/fixtures.ts";
import {
  bomb,
  bombAnswer,
  endlessAnswer,
  HOSTILE,
  HOSTILE_SHOWN,
  hostileError,
  hostileRefusal,
  hostileValues,
  largeArrow,
  MiB,
  SEQUENCES,
  UNSAFE_CHAR,
} from "./hostile-answers.ts";
import { LIE_AMOUNT, startLyingServer, TABLE, type LyingServer } from "./lying-server.ts";

const EXIT = { ok: 0, runtime: 1, usage: 2, badQuery: 3, notPaid: 4, refused: 5, server: 6 };
const SQL = `SELECT * FROM ${TABLE}`;
/** The lie in true units: 5×10^16 smallest units of a 6-decimal token. */
const TRUE_AMOUNT = "50000000000";

let devnet: Devnet;
let liar: LyingServer;
let token: string;

beforeAll(async () => {
  devnet = await startDevnet();
  token = devnet.token.address;
  liar = startLyingServer(devnet);
}, 60_000);

afterAll(async () => {
  await liar?.stop();
  await devnet?.stop();
});

/** A fresh payer holding twice the lie, so a wrongly signed payment would settle. */
async function richPayer() {
  const { privateKey, account } = await fundedAccount(devnet, 2n * LIE_AMOUNT);
  return { address: account.address, env: { ARROW402_PRIVATE_KEY: privateKey } };
}

function query(url: string, args: string[], env: Record<string, string>) {
  return runCli(["query", url, SQL, "--format", "csv", ...args], env);
}

describe("under --max-amount 0.05, nothing is signed", () => {
  test("without a way to verify the token: refused (exit 4) with how to allow it; the lie is only a warning", async () => {
    const payer = await richPayer();
    const before = await devnet.balanceOf(payer.address);
    const signaturesBefore = liar.payments.length;
    const run = await query(liar.url, ["--max-amount", "0.05"], payer.env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain(`Quote: ${LIE_AMOUNT} smallest units of token ${token} on eip155:31337 for 1 row, to ${devnet.payTo}`);
    expect(run.stderr).not.toContain("0.05 USDC");
    expect(run.stderr).toContain(`Warning: suspicious: the server calls token ${token} on eip155:31337 "USDC", but it is not USDC (this client knows no USDC on eip155:31337)`);
    const last = run.stderr.trimEnd().split("\n").at(-1)!;
    expect(last).toStartWith(`arrow402: not paid: the quote of ${LIE_AMOUNT} smallest units of token ${token} on eip155:31337 cannot be checked against --max-amount 0.05`);
    expect(last).toContain("pass --rpc eip155:31337=URL");
    expect(last).toContain(`--token-decimals eip155:31337:${token}=DECIMALS`);
    expect(last).toEndWith("nothing was paid");
    expect(run.stdout.byteLength).toBe(0);
    expect(liar.payments.length).toBe(signaturesBefore);
    expect(await devnet.balanceOf(payer.address)).toBe(before);
  });

  test.each([
    ["--rpc", (rpc: string) => ({ args: ["--rpc", `eip155:31337=${rpc}`], env: {} })],
    ["--rpc by network name", (rpc: string) => ({ args: ["--rpc", `devnet=${rpc}`], env: {} })],
    ["ARROW402_RPC", (rpc: string) => ({ args: [], env: { ARROW402_RPC: `eip155:84532=http://127.0.0.1:9 eip155:31337=${rpc}` } })],
  ])("with %s to the devnet: the contract's 6 decimals are read, the quote shown in true units, over budget", async (_name, give) => {
    const payer = await richPayer();
    const before = await devnet.balanceOf(payer.address);
    const signaturesBefore = liar.payments.length;
    const { args, env } = give(devnet.rpcUrl);
    const run = await query(liar.url, ["--max-amount", "0.05", ...args], { ...payer.env, ...env });
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain(`Quote: ${TRUE_AMOUNT} tUSDC on eip155:31337 for 1 row, to ${devnet.payTo} (${LIE_AMOUNT} smallest units of ${token} on eip155:31337)`);
    expect(run.stderr).toContain(`Warning: suspicious: the server says token ${token} on eip155:31337 has 18 decimals; its contract says 6`);
    expect(run.stderr).toContain(`Warning: suspicious: the server calls token ${token} on eip155:31337 "USDC", but it is not USDC`);
    expect(run.stderr).toContain(`arrow402: over budget: the quote of ${TRUE_AMOUNT} tUSDC on eip155:31337 is more than --max-amount 0.05; nothing was paid`);
    expect(liar.payments.length).toBe(signaturesBefore);
    expect(await devnet.balanceOf(payer.address)).toBe(before);
  });

  test("with the buyer's own --token-decimals: over budget in true units", async () => {
    const payer = await richPayer();
    const signaturesBefore = liar.payments.length;
    const run = await query(liar.url, ["--max-amount", "0.05", "--token-decimals", `${token}=6`], payer.env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain(`the quote of ${TRUE_AMOUNT} of token ${token} on eip155:31337 is more than --max-amount 0.05`);
    expect(run.stderr).toContain("has 18 decimals; you said (--token-decimals) 6");
    expect(liar.payments.length).toBe(signaturesBefore);
  });

  test("an RPC that does not answer: refused, naming the endpoint by its origin only", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const closed = `http://127.0.0.1:${probe.port}`;
    await probe.stop(true);
    const payer = await richPayer();
    const signaturesBefore = liar.payments.length;
    const run = await query(liar.url, ["--max-amount", "0.05", "--rpc", `eip155:31337=${closed}/v2/SECRET-API-KEY`], payer.env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain(`the RPC endpoint for eip155:31337 (${closed}) did not answer`);
    expect(run.stderr).toContain("fix --rpc eip155:31337=URL");
    expect(run.stderr).not.toContain("SECRET-API-KEY");
    expect(liar.payments.length).toBe(signaturesBefore);
  });

  test("an RPC of another chain is not taken for the offer's chain", async () => {
    // The same token address quoted on Base Sepolia; the buyer's "Base Sepolia" RPC is the devnet.
    const elsewhere = startLyingServer(devnet, { network: "eip155:84532" });
    try {
      const payer = await richPayer();
      const run = await query(elsewhere.url, ["--max-amount", "0.05", "--rpc", `base-sepolia=${devnet.rpcUrl}`], payer.env);
      expect(run.code).toBe(EXIT.notPaid);
      expect(run.stderr).toContain("serves chain 31337, not 84532: give an RPC endpoint of eip155:84532");
      expect(run.stderr).toContain("USDC on Base Sepolia is 0x036CbD53842c5426634e7929541eC2318f3dCF7e");
      expect(elsewhere.payments).toHaveLength(0);
    } finally {
      await elsewhere.stop();
    }
  });
});

describe("a server that cannot deliver the format asked for", () => {
  test("--format parquet, quoted as an Arrow stream: not paid even with --yes, nothing signed", async () => {
    // Like a server that predates Parquet output: it ignores Accept and quotes its Arrow stream.
    const payer = await richPayer();
    const before = await devnet.balanceOf(payer.address);
    const signaturesBefore = liar.payments.length;
    const run = await runCli(["query", liar.url, SQL, "--format", "parquet", "--yes"], payer.env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toBe(
      "arrow402: not paid: the server quotes this query as application/vnd.apache.arrow.stream, not application/vnd.apache.parquet as asked; nothing was paid\n",
    );
    expect(run.stdout.byteLength).toBe(0);
    expect(liar.payments.length).toBe(signaturesBefore);
    expect(await devnet.balanceOf(payer.address)).toBe(before);
  });
});

describe("without --max-amount, only what the buyer sees is signed", () => {
  test("--yes without a budget and without an RPC: the quote in smallest units is exactly the amount signed", async () => {
    const payer = await richPayer();
    const before = await devnet.balanceOf(payer.address);
    const run = await query(liar.url, ["--yes"], payer.env);
    expect(run.stderr).toContain(`Quote: ${LIE_AMOUNT} smallest units of token ${token} on eip155:31337 for 1 row`);
    expect(run.stderr).not.toContain("0.05");
    const payment = liar.payments.at(-1)!;
    expect(payment.payload.authorization.from).toBe(payer.address);
    expect(payment.payload.authorization.value).toBe(String(LIE_AMOUNT));
    expect(payment.payload.authorization.to).toBe(devnet.payTo);
    expect(run.code).toBe(EXIT.ok);
    expect(before - (await devnet.balanceOf(payer.address))).toBe(LIE_AMOUNT);
    expect(run.stderr).toContain(`Paid ${LIE_AMOUNT} smallest units of token ${token} on eip155:31337 to ${devnet.payTo}; transaction 0x`);
  });

  // script(1) from util-linux gives the CLI a real terminal (stdin a TTY) to ask on.
  test.skipIf(Bun.which("script") === null)("the terminal question shows verified facts only, and 'no' signs nothing", async () => {
    const payer = await richPayer();
    const signaturesBefore = liar.payments.length;
    const withRpc = await onTerminal([liar.url, "--rpc", `eip155:31337=${devnet.rpcUrl}`], payer.env);
    expect(withRpc.output).toContain(`Pay ${TRUE_AMOUNT} tUSDC on eip155:31337 to ${devnet.payTo}? [y/N]`);
    expect(withRpc.output).toContain("has 18 decimals; its contract says 6");
    expect(withRpc.output).toContain("payment declined; nothing was paid");
    expect(withRpc.code).toBe(EXIT.notPaid);
    const without = await onTerminal([liar.url], payer.env);
    expect(without.output).toContain(`Pay ${LIE_AMOUNT} smallest units of token ${token} on eip155:31337 to ${devnet.payTo}? [y/N]`);
    expect(without.code).toBe(EXIT.notPaid);
    expect(liar.payments.length).toBe(signaturesBefore);
  });
});

describe("arrow402 tables", () => {
  test("without an RPC: prices in smallest units, the claimed symbol flagged, how to verify", async () => {
    const run = await runCli(["tables", liar.url]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdoutText).toContain(`price: ${LIE_AMOUNT} smallest units of token ${token} per row on eip155:31337 [default], paid to ${devnet.payTo}`);
    expect(run.stdoutText).toContain(`  warning: suspicious: the server calls token ${token} on eip155:31337 "USDC", but it is not USDC`);
    expect(run.stdoutText).toContain("  unverified, amounts in smallest units: ");
    expect(run.stdoutText).toContain("pass --rpc eip155:31337=URL");
    expect(run.stdoutText).not.toContain("0.05");
  });

  test("with --rpc: true units from the contract, and the lie about decimals flagged", async () => {
    const run = await runCli(["tables", liar.url, "--rpc", `eip155:31337=${devnet.rpcUrl}`]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdoutText).toContain(`price: ${TRUE_AMOUNT} tUSDC per row on eip155:31337 [default], paid to ${devnet.payTo}`);
    expect(run.stdoutText).toContain(`  warning: suspicious: the server says token ${token} on eip155:31337 has 18 decimals; its contract says 6`);
    expect(run.stdoutText).not.toContain("unverified");
  });

  test("a malformed --rpc is a usage error", async () => {
    const run = await runCli(["tables", liar.url, "--rpc", "eip155:31337"]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe("arrow402: --rpc an entry is not NETWORK=URL: write e.g. eip155:84532=https://sepolia.base.org\n");
  });
});

describe("reading the token contract", () => {
  test("decimals and symbol from the chain; the wrong chain and a missing contract are refused", async () => {
    expect(await readTokenContract(devnet.rpcUrl, "eip155:31337", token)).toEqual({ ok: true, decimals: 6, symbol: "tUSDC" });
    const wrongChain = await readTokenContract(devnet.rpcUrl, "eip155:8453", token);
    expect(wrongChain.ok === false && wrongChain.reason).toContain("serves chain 31337, not 8453");
    const noContract = await readTokenContract(devnet.rpcUrl, "eip155:31337", devnet.payTo);
    expect(noContract).toEqual({ ok: false, reason: `there is no contract at ${devnet.payTo} on eip155:31337` });
  });
});

/** Runs the CLI with stdin, stdout and stderr on a real terminal (script(1)), answering "n". */
async function onTerminal(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const command = ["bun", "src/main.ts", "query", args[0]!, SQL, ...args.slice(1)].map(shellQuote).join(" ");
  const child = Bun.spawn(["script", "-qefc", command, "/dev/null"], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, ARROW402_PRIVATE_KEY: undefined, NO_COLOR: "1", ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let answered = false;
  const output = (async () => {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk);
      // Answer once the question is on the terminal.
      if (text.includes("[y/N]") && !answered) {
        answered = true;
        child.stdin.write("n\n");
        await child.stdin.flush();
      }
    }
    return text;
  })();
  const [text, code] = await Promise.all([output, child.exited]);
  child.stdin.end();
  return { code, output: text.replaceAll("\r", "") };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

describe("a server that writes terminal escape sequences", () => {
  let hostile: LyingServer;
  const dir = tempDir("arrow402-hostile-");
  beforeAll(() => {
    hostile = startLyingServer(devnet, { answer: hostileValues, documentText: HOSTILE });
  });
  afterAll(async () => {
    await hostile?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each sequence as the client shows it: its control characters as `\u{…}` escapes. */
  const shown = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  const HEADER = `name${SEQUENCES.eraseLine}`;

  test.each(["table", "csv"])("%s after a payment: names and values shown escaped, nothing raw on stdout or stderr", async (format) => {
    const payer = await richPayer();
    const run = await runCli(["query", hostile.url, SQL, "--format", format, "--yes"], payer.env);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toContain(`Paid ${LIE_AMOUNT} smallest units of token ${token}`);
    expect(run.stderr).not.toMatch(UNSAFE_CHAR);
    expect(run.stdoutText).not.toMatch(UNSAFE_CHAR);
    expect(run.stdoutText).toContain(shown(HEADER));
    for (const [name, sequence] of Object.entries(SEQUENCES)) {
      // The table shows a line break or carriage return as a space, like every other line break.
      const expected = format === "table" && name === "overwrite" ? sequence.replace("\r", " ") : shown(sequence);
      expect(run.stdoutText).toContain(expected);
    }
  }, 30_000);

  test.each(["json", "ndjson"])("%s: no raw control character, and the values decode exactly", async (format) => {
    const payer = await richPayer();
    const run = await runCli(["query", hostile.url, SQL, "--format", format, "--yes"], payer.env);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdoutText).not.toMatch(UNSAFE_CHAR);
    expect(run.stderr).not.toMatch(UNSAFE_CHAR);
    const rows = format === "json" ? (JSON.parse(run.stdoutText) as Record<string, string>[]) : run.stdoutText.trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(rows.map((row) => row[HEADER])).toEqual([...Object.values(SEQUENCES), HOSTILE]);
  }, 30_000);

  test("csv to a file is written exact (no terminal reads it on the way); the messages stay escaped", async () => {
    const payer = await richPayer();
    const file = join(dir, "values.csv");
    const run = await runCli(["query", hostile.url, SQL, "--output", file, "--yes"], payer.env);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).not.toMatch(UNSAFE_CHAR);
    const csv = readFileSync(file, "utf8");
    expect(csv).toContain(SEQUENCES.clipboard);
    expect(csv).toContain(SEQUENCES.c1);
    // Rendered as for a pipe instead, the same answer has no raw control character left.
    const piped = await runCli(["query", hostile.url, SQL, "--format", "csv", "--yes"], (await richPayer()).env);
    expect(piped.stdoutText).not.toMatch(UNSAFE_CHAR);
  }, 30_000);

  // What follows was already printed through printable.ts; kept here so that it stays so.
  test.each([
    ["a 402 after payment", () => ({ answer: hostileRefusal }), EXIT.refused, `arrow402: payment refused: settlement failed${HOSTILE_SHOWN}`],
    ["a 400", () => ({ free: true, answer: hostileError(400) }), EXIT.badQuery, `arrow402: no such column${HOSTILE_SHOWN}`],
    ["a 500", () => ({ free: true, answer: hostileError(500) }), EXIT.server, `arrow402: server error (500): no such column${HOSTILE_SHOWN}`],
  ])("%s whose text holds the sequences: shown escaped on stderr", async (_name, lies, code, message) => {
    const liar = startLyingServer(devnet, lies());
    try {
      const payer = await richPayer();
      const run = await runCli(["query", liar.url, SQL, "--format", "csv", "--yes"], payer.env);
      expect(run.code).toBe(code);
      expect(run.stderr).not.toMatch(UNSAFE_CHAR);
      expect(run.stderr).toContain(message);
      expect(run.stdout.byteLength).toBe(0);
    } finally {
      await liar.stop();
    }
  }, 30_000);

  test("tables: names, types and descriptions shown escaped, the columns still aligned", async () => {
    const run = await runCli(["tables", hostile.url]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdoutText).not.toMatch(UNSAFE_CHAR);
    expect(run.stdoutText).toContain(`${TABLE} — Trades${HOSTILE_SHOWN}`);
    expect(run.stdoutText).toContain(`    id${HOSTILE_SHOWN}  Int32${HOSTILE_SHOWN}  not null  the id${HOSTILE_SHOWN}`);
  }, 30_000);
});

describe.skipIf(GNU_TIME === null)("a server that sends more than the client accepts", () => {
  const dir = tempDir("arrow402-bounds-");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** A fresh $TMPDIR for one run, to see that the client leaves nothing behind. */
  const freshTmp = () => tempDir("arrow402-bounds-tmp-");
  /** Generous: the client itself takes about 60 MB; holding the answer would take hundreds. */
  const MEMORY_BOUND = 300 * MiB;

  test("a 35 KB zstd bomb (1088 MiB of zeros), under the default bound: refused, nothing written, memory bounded", async () => {
    const liar = startLyingServer(devnet, { free: true, answer: bombAnswer("zstd", bomb("zstd", 17)) });
    const tmp = freshTmp();
    try {
      const run = await runCliMeasured(["query", liar.url, SQL, "--format", "csv"], { TMPDIR: tmp });
      expect(run.stderr).toBe(
        "arrow402: the zstd-compressed answer is larger than 1 GiB (1073741824 bytes) once decompressed: " +
          "pass a larger --max-bytes if an answer this large is expected; nothing was written\n",
      );
      expect(run.code).toBe(EXIT.runtime);
      expect(run.stdout.byteLength).toBe(0);
      expect(run.peakRssBytes).toBeLessThan(MEMORY_BOUND);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      await liar.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);

  test("a gzip bomb under --max-bytes, to --output: refused, the existing file untouched, nothing left beside it", async () => {
    const liar = startLyingServer(devnet, { free: true, answer: bombAnswer("gzip", bomb("gzip", 4)) });
    const out = tempDir("arrow402-bounds-out-");
    try {
      const file = join(out, "rows.csv");
      writeFileSync(file, "kept\n");
      const run = await runCliMeasured(["query", liar.url, SQL, "--output", file, "--max-bytes", "100MB"]);
      expect(run.stderr).toBe(
        "arrow402: the gzip-compressed answer is larger than 100 MB (100000000 bytes) once decompressed: " +
          "pass a larger --max-bytes if an answer this large is expected; nothing was written\n",
      );
      expect(run.code).toBe(EXIT.runtime);
      expect(run.peakRssBytes).toBeLessThan(MEMORY_BOUND);
      expect(readFileSync(file, "utf8")).toBe("kept\n");
      expect(readdirSync(out)).toEqual(["rows.csv"]);
    } finally {
      await liar.stop();
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  test("a bomb after a payment: refused, saying that the payment was sent", async () => {
    const liar = startLyingServer(devnet, { answer: bombAnswer("zstd", bomb("zstd", 2)) });
    try {
      const payer = await richPayer();
      const run = await runCliMeasured(["query", liar.url, SQL, "--format", "csv", "--yes", "--max-bytes", "64MiB"], payer.env);
      expect(run.code).toBe(EXIT.runtime);
      const last = run.stderr.trimEnd().split("\n").at(-1);
      expect(last).toBe(
        "arrow402: the zstd-compressed answer is larger than 64 MiB (67108864 bytes) once decompressed: pass a larger --max-bytes " +
          "if an answer this large is expected; nothing was written; the payment was sent and may have been settled: check the payer's transfers",
      );
      expect(run.stderr).not.toContain("sending the same payment again");
      expect(liar.payments).toHaveLength(1);
      expect(run.peakRssBytes).toBeLessThan(MEMORY_BOUND);
    } finally {
      await liar.stop();
    }
  }, 60_000);

  test.each([
    ["a body that never ends", () => endlessAnswer(), "the answer is larger than 10 MB (10000000 bytes) as sent"],
    ["a body whose Content-Length is over the bound", () => new Response(new Uint8Array(10_000_001)), "the answer is larger than 10 MB (10000000 bytes), by its Content-Length"],
  ])("%s: refused under --max-bytes 10MB", async (_name, answer, reason) => {
    const liar = startLyingServer(devnet, { free: true, answer });
    try {
      const run = await runCliMeasured(["query", liar.url, SQL, "--format", "arrow", "--max-bytes", "10MB"]);
      expect(run.stderr).toBe(`arrow402: ${reason}: pass a larger --max-bytes if an answer this large is expected; nothing was written\n`);
      expect(run.code).toBe(EXIT.runtime);
      expect(run.stdout.byteLength).toBe(0);
      expect(run.peakRssBytes).toBeLessThan(MEMORY_BOUND);
    } finally {
      await liar.stop();
    }
  }, 60_000);

  test("a 256 MiB honest answer to --output is streamed to the file, byte for byte, in bounded memory", async () => {
    const big = largeArrow(256);
    const liar = startLyingServer(devnet, { free: true, answer: big.answer });
    const out = tempDir("arrow402-bounds-out-");
    try {
      const file = join(out, "big.arrow");
      const run = await runCliMeasured(["query", liar.url, SQL, "--output", file]);
      expect(run.stderr).toBe(`${256 * 131_072} rows written to ${file} (arrow)\n`);
      expect(run.code).toBe(EXIT.ok);
      expect(run.peakRssBytes).toBeLessThan(MEMORY_BOUND);
      expect(readdirSync(out)).toEqual(["big.arrow"]);
      const expected = createHash("sha256");
      for (const part of big.bytes()) expected.update(part);
      const written = createHash("sha256");
      for await (const part of Bun.file(file).stream()) written.update(part);
      expect(Bun.file(file).size).toBe(big.size);
      expect(written.digest("hex")).toBe(expected.digest("hex"));
    } finally {
      await liar.stop();
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  test("a malformed --max-bytes is a usage error, before any request", async () => {
    const run = await runCli(["query", "http://127.0.0.1:9", SQL, "--max-bytes", "lots"]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe("arrow402: --max-bytes 'lots' is not a size: write bytes, or e.g. 500MB, 2GiB\n");
  });
});
