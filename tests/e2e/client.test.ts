/**
 * `arrow402 query` and `arrow402 tables` end to end: the CLI as a subprocess (stdin not a
 * terminal), a real arrow402 server over a real SQLite file, and the devnet — a local chain, an
 * EIP-3009 test token and a real x402 facilitator — so every payment is a real signature and a
 * real on-chain transfer whose balances the tests read back. What crossed the wire (the format
 * asked for, the compression used, the raw bytes) is seen by a recording proxy (wire-proxy.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { startDevnet, type Devnet } from "../../devnet/index.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { fundedAccount } from "../payment/devnet-token.ts";
import { tempDir } from "../support/fixtures.ts";
import { runCli, type CliRun } from "../client/cli.ts";
import { startDropProxy } from "../client/drop-proxy.ts";
import { startWireProxy, type Exchange } from "../client/wire-proxy.ts";
import { readParquetIndependently } from "../formats/support.ts";

const PER_ROW = 100n; // "0.0001" with 6 decimals
const TICKS = 20_000;
const PARQUET = "application/vnd.apache.parquet";
const ARROW = "application/vnd.apache.arrow.stream";
const EXIT = { ok: 0, runtime: 1, usage: 2, badQuery: 3, notPaid: 4, refused: 5 };

const dir = tempDir("arrow402-client-e2e-");
let devnet: Devnet;
let server: RunningServer;
/** Every key used, to check that none ever appears in any output. */
const keys: string[] = [];

interface TradeRow {
  id: bigint;
  big: bigint | null;
  label: string | null;
  data: Uint8Array | null;
  at: string | null;
  score: number | null;
}

function createDatabase(path: string): void {
  const db = new Database(path, { create: true, strict: true });
  db.run("CREATE TABLE trades (id INTEGER PRIMARY KEY, big INTEGER, label TEXT, data BLOB, at DATETIME, score REAL)");
  const insert = db.prepare("INSERT INTO trades VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (let id = 1; id <= 30; id++) {
    if (id === 5) insert.run(id, null, null, null, null, null);
    else insert.run(id, 9007199254740993n + BigInt(id), `trade, "${id}"`, new Uint8Array([id, 255 - id]), `2026-03-${String(id).padStart(2, "0")}T12:34:56.789Z`, id / 4);
  }
  db.run("CREATE TABLE pairs (symbol TEXT, decimals INTEGER)");
  db.run("INSERT INTO pairs VALUES ('ETH', 18), ('USDC', 6)");
  db.run("CREATE TABLE reports (id INTEGER, title TEXT)");
  db.run("CREATE TABLE ticks (id INTEGER PRIMARY KEY, at TIMESTAMP, side TEXT, price REAL)");
  const tick = db.prepare("INSERT INTO ticks VALUES (?1, ?2, ?3, ?4)");
  db.transaction(() => {
    for (let id = 1; id <= TICKS; id++) tick.run(id, new Date(Date.UTC(2026, 0, 1) + id * 1000).toISOString(), id % 3 === 0 ? "sell" : "buy", 2000 + (id % 97) / 4);
  })();
  db.close();
}

function trades(maxId: number): TradeRow[] {
  const db = new Database(join(dir, "data.sqlite"), { readonly: true, safeIntegers: true });
  try {
    return db.query<TradeRow, [number]>("SELECT * FROM trades WHERE id <= ?1 ORDER BY id").all(maxId);
  } finally {
    db.close();
  }
}

const hex = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString("hex"));

beforeAll(async () => {
  devnet = await startDevnet();
  createDatabase(join(dir, "data.sqlite"));
  const { key: _key, ...token } = devnet.tokenConfig();
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0" },
      facilitator: { url: devnet.facilitatorUrl },
      database: { sqlite: "data.sqlite" },
      ledger: { path: "ledger.sqlite" },
      tokens: { "usdc/devnet": { ...token, symbol: "tUSDC", network_label: "Devnet" } },
      tables: [
        {
          name: "trades",
          description: "Trades, paid per row",
          columns: { big: "A big integer" },
          price_tags: [{ type: "per_row", pay_to: devnet.payTo, token: "usdc/devnet", amount_per_item: "0.0001", is_default: true }],
        },
        { name: "pairs", description: "Free pairs" },
        { name: "ticks", description: "Free ticks, enough to compress" },
        {
          name: "reports",
          description: "Free queries, paid metadata",
          price_tags: [{ type: "metadata_price", pay_to: devnet.payTo, token: "usdc/devnet", amount: "0.01" }],
        },
      ],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config, { workers: 1 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI and checks that no key ever shows in its output. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const run = await runCli(args, env);
  for (const key of keys) {
    const bare = key.slice(2).toLowerCase();
    expect(run.stdoutText.toLowerCase()).not.toContain(bare);
    expect(run.stderr.toLowerCase()).not.toContain(bare);
  }
  return run;
}

async function payer(amount = 10n ** 6n) {
  const account = await fundedAccount(devnet, amount);
  keys.push(account.privateKey);
  return { ...account, env: { ARROW402_PRIVATE_KEY: account.privateKey } };
}

async function balances(address: `0x${string}`) {
  return { payer: await devnet.balanceOf(address), payTo: await devnet.balanceOf(devnet.payTo) };
}

const sqlUpTo = (maxId: number) => `SELECT * FROM trades WHERE id <= ${maxId} ORDER BY id`;

/** The devnet token is not built in: under a budget, the buyer verifies it through the chain. */
const rpc = () => ["--rpc", `eip155:31337=${devnet.rpcUrl}`];

describe("paying within the budget", () => {
  test("csv: pays exactly the quote, prints the receipt on stderr and the rows on stdout", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const run = await cli(["query", server.url, sqlUpTo(12), "--yes", "--max-amount", "0.5", "--format", "csv", ...rpc()], env);
    // Decimals and symbol are read from the token contract (its network label stays the chain id).
    const token = "tUSDC on eip155:31337";
    expect(run.stderr).toContain(`Quote: 0.0012 ${token} for 12 rows, to ${devnet.payTo} (1200 smallest units of ${devnet.token.address} on eip155:31337)`);
    expect(run.code).toBe(EXIT.ok);
    const after = await balances(account.address);
    expect(before.payer - after.payer).toBe(12n * PER_ROW);
    expect(after.payTo - before.payTo).toBe(12n * PER_ROW);
    expect(run.stderr).toMatch(new RegExp(`Paid 0\\.0012 ${token} to ${devnet.payTo}; transaction 0x[0-9a-f]{64} on eip155:31337`));

    const lines = run.stdoutText.trimEnd().split("\n");
    expect(lines[0]).toBe("id,big,label,data,at,score");
    const expected = trades(12).map((row) =>
      [
        String(row.id),
        row.big === null ? "" : String(row.big),
        row.label === null ? "" : `"${row.label.replaceAll('"', '""')}"`,
        hex(row.data) ?? "",
        row.at ?? "",
        row.score === null ? "" : String(row.score),
      ].join(","),
    );
    expect(lines.slice(1)).toEqual(expected);
  });

  test("json: --max-amount alone is consent (RPC from ARROW402_RPC); int64 keeps every digit", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const run = await cli(["query", server.url, sqlUpTo(7), "--max-amount", "0.0007", "--format", "json"], { ...env, ARROW402_RPC: `eip155:31337=${devnet.rpcUrl}` });
    expect(run.code).toBe(EXIT.ok);
    expect(before.payer - (await devnet.balanceOf(account.address))).toBe(7n * PER_ROW);
    const parsed = JSON.parse(run.stdoutText) as Record<string, unknown>[];
    const expected = trades(7);
    expect(parsed.map((row) => row.id)).toEqual(expected.map((row) => Number(row.id)));
    expect(parsed.map((row) => row.data)).toEqual(expected.map((row) => hex(row.data)));
    expect(parsed.map((row) => row.at)).toEqual(expected.map((row) => row.at));
    // Beyond 2^53 a double would round: the text must carry the exact digits.
    for (const row of expected) {
      if (row.big !== null) expect(run.stdoutText).toContain(`"big":${row.big},`);
    }
    expect(parsed[4]).toEqual({ id: 5, big: null, label: null, data: null, at: null, score: null });
  });

  test("arrow to a file with --yes: the file is the server's Arrow stream; an unverified token is quoted in smallest units", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const file = join(dir, "out.arrow");
    const run = await cli(["query", server.url, sqlUpTo(20), "--yes", "--output", file], env);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toContain(`Quote: ${20n * PER_ROW} smallest units of token ${devnet.token.address} on eip155:31337 for 20 rows`);
    expect(run.stdout.byteLength).toBe(0);
    expect(before.payer - (await devnet.balanceOf(account.address))).toBe(20n * PER_ROW);
    const table = tableFromIPC(readFileSync(file));
    const expected = trades(20);
    expect(table.numRows).toBe(expected.length);
    expect([...table.getChild("big")!]).toEqual(expected.map((row) => row.big));
    expect([...table.getChild("label")!]).toEqual(expected.map((row) => row.label));
    expect([...table.getChild("data")!].map((value) => hex(value as Uint8Array | null))).toEqual(expected.map((row) => hex(row.data)));
  });

  test("a lost answer after settlement is recovered with the same payment, paid once", async () => {
    const proxy = await startDropProxy(server.url);
    try {
      const { account, env } = await payer();
      const before = await balances(account.address);
      const run = await cli(["query", proxy.url, sqlUpTo(9), "--max-amount", "1", "--format", "ndjson", ...rpc()], env);
      expect(run.code).toBe(EXIT.ok);
      expect(proxy.paidRequests()).toBeGreaterThanOrEqual(2);
      expect(run.stderr).toContain("sending the same payment again");
      expect(run.stderr).toContain("paid once");
      const after = await balances(account.address);
      expect(before.payer - after.payer).toBe(9n * PER_ROW);
      expect(after.payTo - before.payTo).toBe(9n * PER_ROW);
      const rows = run.stdoutText.trimEnd().split("\n").map((line) => JSON.parse(line) as { id: number });
      expect(rows.map((row) => row.id)).toEqual(trades(9).map((row) => Number(row.id)));
    } finally {
      await proxy.stop();
    }
  });
});

describe("paying nothing", () => {
  test("--max-amount below the quote: over budget, balances unchanged", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const run = await cli(["query", server.url, sqlUpTo(12), "--yes", "--max-amount", "0.0011", "--format", "csv", ...rpc()], env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain("over budget");
    expect(run.stderr).toContain("the quote of 0.0012 tUSDC on eip155:31337 is more than --max-amount");
    expect(run.stdout.byteLength).toBe(0);
    expect(await balances(account.address)).toEqual(before);
  });

  test("a token that is not built in, with no RPC or statement: not paid under a budget, how to allow it", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const run = await cli(["query", server.url, sqlUpTo(3), "--max-amount", "0.5", "--format", "csv"], env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain(`cannot be checked against --max-amount 0.5: token ${devnet.token.address} on eip155:31337 is not built in`);
    expect(run.stderr).toContain("pass --rpc eip155:31337=URL");
    // An honest server's claims (6 decimals, "tUSDC") raise no warning, and are still not taken.
    expect(run.stderr).not.toContain("Warning");
    expect(await balances(account.address)).toEqual(before);
    // The buyer's own statement of the decimals allows it.
    const stated = await cli(["query", server.url, sqlUpTo(3), "--max-amount", "0.0003", "--format", "csv", "--token-decimals", `devnet:${devnet.token.address}=6`], env);
    expect(stated.code).toBe(EXIT.ok);
    expect(stated.stderr).toContain(`Quote: 0.0003 of token ${devnet.token.address} on eip155:31337 for 3 rows`);
    expect(before.payer - (await devnet.balanceOf(account.address))).toBe(3n * PER_ROW);
  });

  test("no --yes and no --max-amount without a terminal: refuses", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const run = await cli(["query", server.url, sqlUpTo(3), "--format", "csv"], env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain("--max-amount");
    expect(run.stdout.byteLength).toBe(0);
    expect(await balances(account.address)).toEqual(before);
  });

  test("--network that the server does not offer: refuses", async () => {
    const { account, env } = await payer();
    const before = await balances(account.address);
    const run = await cli(["query", server.url, sqlUpTo(3), "--yes", "--network", "base-sepolia,eip155:8453", "--format", "csv"], env);
    expect(run.code).toBe(EXIT.notPaid);
    expect(run.stderr).toContain("eip155:31337");
    expect(await balances(account.address)).toEqual(before);
  });

  test("a payer without funds: the payment is refused with the facilitator's reason", async () => {
    keys.push(devnet.unfunded.privateKey);
    const before = await devnet.balanceOf(devnet.payTo);
    const run = await cli(["query", server.url, sqlUpTo(3), "--yes", "--format", "csv"], { ARROW402_PRIVATE_KEY: devnet.unfunded.privateKey });
    expect(run.code).toBe(EXIT.refused);
    const line = run.stderr.trimEnd().split("\n").at(-1)!;
    expect(line).toMatch(/^arrow402: payment refused: The payment was not verified \(\w+/);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(before);
  });
});

describe("failures", () => {
  test("bad SQL: the server's message on one line, exit 3", async () => {
    const sql = "SELECT count(*) FROM trades";
    const direct = await fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`);
    expect(direct.status).toBe(400);
    const run = await cli(["query", server.url, sql, "--yes", "--format", "csv"]);
    expect(run.code).toBe(EXIT.badQuery);
    expect(run.stderr).toBe(`arrow402: ${await direct.text()}\n`);
  });

  test("server down: network failure, exit 1", async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${probe.port}`;
    await probe.stop(true);
    const run = await cli(["query", url, sqlUpTo(3), "--yes", "--format", "csv"]);
    expect(run.code).toBe(EXIT.runtime);
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain(url);
  });

  test("a malformed key is refused without showing it; nothing is paid", async () => {
    const malformed = `0x${"7".repeat(63)}`;
    const before = await devnet.balanceOf(devnet.payTo);
    const run = await runCli(["query", server.url, sqlUpTo(3), "--yes", "--format", "csv"], { MY_KEY: malformed });
    const withKeyEnv = await runCli(["query", server.url, sqlUpTo(3), "--yes", "--format", "csv", "--key-env", "MY_KEY"], { MY_KEY: malformed });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain("ARROW402_PRIVATE_KEY");
    expect(withKeyEnv.code).toBe(EXIT.usage);
    expect(withKeyEnv.stderr).toContain("MY_KEY");
    expect(withKeyEnv.stderr).not.toContain("7".repeat(63));
    expect(await devnet.balanceOf(devnet.payTo)).toBe(before);
  });

  test("bad usage: exit 2", async () => {
    expect((await cli(["query", server.url])).code).toBe(EXIT.usage);
    expect((await cli(["query", server.url, sqlUpTo(1), "--format", "xml"])).code).toBe(EXIT.usage);
    const budget = await cli(["query", server.url, sqlUpTo(1), "--max-amount=1e3"]);
    expect(budget.code).toBe(EXIT.usage);
    expect(budget.stderr).toBe("arrow402: --max-amount '1e3' is not a decimal amount of token units, e.g. 0.05\n");
  });
});

describe("free data and discovery", () => {
  test("a free table needs no key and pays nothing", async () => {
    const run = await cli(["query", `${server.url}/api/`, "SELECT * FROM pairs", "--format", "csv"]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdoutText).toBe("symbol,decimals\nETH,18\nUSDC,6\n");
    expect(run.stderr).not.toContain("Paid");
  });

  test("tables lists tables, columns and prices in human units, from decimals read on chain", async () => {
    const run = await cli(["tables", server.url, ...rpc()]);
    expect(run.code).toBe(EXIT.ok);
    const out = run.stdoutText;
    expect(out).toContain("trades — Trades, paid per row");
    expect(out).toContain(`price: 0.0001 tUSDC per row on eip155:31337 [default], paid to ${devnet.payTo}`);
    expect(out).toMatch(/\n {4}big +Int64 +A big integer\n/);
    expect(out).toMatch(/\n {4}at +Timestamp<MILLISECOND, UTC>\n/);
    expect(out).toContain("pairs — Free pairs");
    expect(out).toContain("reports — Free queries, paid metadata");
    expect(out).toContain("metadata costs 0.01 tUSDC on eip155:31337");
    expect(out).not.toContain("warning");
    expect(out).not.toContain("unverified");
  });

  test("tables without an RPC: the token not built in is shown in smallest units, with how to verify it", async () => {
    const run = await cli(["tables", server.url]);
    expect(run.code).toBe(EXIT.ok);
    const out = run.stdoutText;
    expect(out).toContain(`price: ${PER_ROW} smallest units of token ${devnet.token.address} per row on eip155:31337 [default], paid to ${devnet.payTo}`);
    expect(out).toContain(`metadata costs 10000 smallest units of token ${devnet.token.address} on eip155:31337`);
    expect(out).toContain("  unverified, amounts in smallest units: ");
    expect(out).not.toContain("warning");
  });
});

/** The rows of a Parquet file as read by parquet-wasm (arrow-rs), in the fixture's terms. */
function parquetTrades(bytes: Uint8Array) {
  const table = readParquetIndependently(bytes);
  const column = (name: string) => [...table.getChild(name)!];
  const at = column("at").map((value) => (value === null ? null : new Date(Number(value)).toISOString()));
  const data = column("data").map((value) => hex(value as Uint8Array | null));
  return { rows: table.numRows, id: column("id"), big: column("big"), label: column("label"), data, at, score: column("score") };
}

function expectTradesParquet(bytes: Uint8Array, maxId: number): void {
  const expected = trades(maxId);
  expect(parquetTrades(bytes)).toEqual({
    rows: expected.length,
    id: expected.map((row) => row.id),
    big: expected.map((row) => row.big),
    label: expected.map((row) => row.label),
    data: expected.map((row) => hex(row.data)),
    at: expected.map((row) => row.at),
    score: expected.map((row) => row.score),
  });
}

/**
 * The query requests (the others read the server's token claims), each of which asked for
 * `accept` and for compression; every request of the client asked for compression.
 */
function queriesAsking(exchanges: Exchange[], accept: string): Exchange[] {
  for (const exchange of exchanges) expect(exchange.request["accept-encoding"]).toBe("zstd, gzip");
  const queries = exchanges.filter((exchange) => exchange.path === "/api/query");
  expect(queries.length).toBeGreaterThan(0);
  for (const exchange of queries) expect(exchange.request.accept).toBe(accept);
  return queries;
}

function fileBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}

async function direct(sql: string, accept = ARROW): Promise<Uint8Array> {
  const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { accept } });
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

describe("parquet and compression", () => {
  test("parquet, paid: the quote is paid once; the file is the server's Parquet, sent zstd-compressed and written exact", async () => {
    const proxy = startWireProxy(server.url);
    try {
      const { account, env } = await payer();
      const before = await balances(account.address);
      const file = join(dir, "paid.parquet");
      const run = await cli(["query", proxy.url, sqlUpTo(25), "--max-amount", "0.0025", "--format", "parquet", "--output", file, ...rpc()], env);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stderr).toContain("Quote: 0.0025 tUSDC on eip155:31337 for 25 rows");
      expect(run.stderr).toContain(`25 rows written to ${file} (parquet)`);
      expect(run.stdout.byteLength).toBe(0);
      const after = await balances(account.address);
      expect(before.payer - after.payer).toBe(25n * PER_ROW);
      expect(after.payTo - before.payTo).toBe(25n * PER_ROW);

      // The 402 and the paid retry both asked for Parquet; the data came zstd-compressed.
      const queries = queriesAsking(proxy.exchanges, PARQUET);
      expect(queries).toHaveLength(2);
      const [quote, paid] = queries;
      expect(quote!.status).toBe(402);
      expect(paid!.request["payment-signature"]).toBeString();
      expect(paid).toMatchObject({ status: 200, contentEncoding: "zstd", contentType: PARQUET });
      const written = fileBytes(file);
      expect(written).toEqual(new Uint8Array(Bun.zstdDecompressSync(paid!.wire)));
      expectTradesParquet(written, 25);
    } finally {
      await proxy.stop();
    }
  });

  test("parquet to a pipe, and chosen by a .parquet output's extension (free table)", async () => {
    const sql = "SELECT * FROM pairs ORDER BY symbol";
    const piped = await cli(["query", server.url, sql, "--format", "parquet"]);
    expect(piped.code).toBe(EXIT.ok);
    expect(piped.stderr).toBe("2 rows written (parquet)\n");
    const table = readParquetIndependently(piped.stdout);
    expect([...table.getChild("symbol")!]).toEqual(["ETH", "USDC"]);
    expect([...table.getChild("decimals")!]).toEqual([18n, 6n]);

    const file = join(dir, "pairs.parquet");
    const byExtension = await cli(["query", server.url, sql, "--output", file]);
    expect(byExtension.code).toBe(EXIT.ok);
    expect(byExtension.stderr).toBe(`2 rows written to ${file} (parquet)\n`);
    expect(fileBytes(file)).toEqual(piped.stdout);
  });

  test("a large result crosses the wire compressed and is written byte for byte", async () => {
    const sql = "SELECT * FROM ticks ORDER BY id";
    const proxy = startWireProxy(server.url);
    try {
      const file = join(dir, "ticks.arrow");
      const run = await cli(["query", proxy.url, sql, "--output", file]);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stderr).toBe(`${TICKS} rows written to ${file} (arrow)\n`);
      const [exchange] = queriesAsking(proxy.exchanges, ARROW);
      expect(exchange!.contentEncoding).toBe("zstd");
      const arrow = await direct(sql);
      expect(fileBytes(file)).toEqual(arrow);
      // 20,000 rows of repetitive ticks: far fewer bytes on the wire than in the stream.
      expect(exchange!.wire.byteLength).toBeLessThan(arrow.byteLength / 3);
    } finally {
      await proxy.stop();
    }
  });

  test("a server that only gzips: decompressed once, the same CSV as without a proxy", async () => {
    const sql = "SELECT * FROM ticks WHERE id <= 2000 ORDER BY id";
    const proxy = startWireProxy(server.url, { acceptEncoding: "gzip" });
    try {
      const [viaGzip, plain] = await Promise.all([cli(["query", proxy.url, sql, "--format", "csv"]), cli(["query", server.url, sql, "--format", "csv"])]);
      expect(viaGzip.code).toBe(EXIT.ok);
      expect(proxy.exchanges.map((exchange) => exchange.contentEncoding)).toEqual(["gzip"]);
      expect(viaGzip.stdoutText.split("\n")).toHaveLength(2000 + 2);
      expect(viaGzip.stdoutText).toBe(plain.stdoutText);
      expect(viaGzip.stdoutText).toStartWith("id,at,side,price\n1,2026-01-01T00:00:01.000Z,buy,2000.25\n");
    } finally {
      await proxy.stop();
    }
  });

  test("a paid Parquet answer cut mid-way through its compressed body is recovered with the same payment, paid once", async () => {
    // CLI → drop proxy (cuts the first paid answer) → wire proxy (sees the server's answer) → server.
    const wire = startWireProxy(server.url);
    const drop = await startDropProxy(wire.url);
    try {
      const { account, env } = await payer();
      const before = await balances(account.address);
      const file = join(dir, "recovered.parquet");
      const run = await cli(["query", drop.url, sqlUpTo(22), "--max-amount", "1", "--output", file, ...rpc()], env);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stderr).toContain("sending the same payment again");
      expect(run.stderr).toContain("paid once");
      const paid = queriesAsking(wire.exchanges, PARQUET).filter((exchange) => exchange.request["payment-signature"] !== undefined);
      expect(paid.length).toBeGreaterThanOrEqual(2);
      expect(paid[0]).toMatchObject({ status: 200, contentEncoding: "zstd" });
      expect(paid.every((exchange) => exchange.request["payment-signature"] === paid[0]!.request["payment-signature"])).toBe(true);
      const after = await balances(account.address);
      expect(before.payer - after.payer).toBe(22n * PER_ROW);
      expect(after.payTo - before.payTo).toBe(22n * PER_ROW);
      expectTradesParquet(fileBytes(file), 22);
    } finally {
      await drop.stop();
      await wire.stop();
    }
  });

  // script(1) from util-linux gives the CLI a real terminal for stdout.
  test.skipIf(Bun.which("script") === null)("Parquet is never written to a terminal", async () => {
    const command = ["bun", "src/main.ts", "query", server.url, "SELECT * FROM pairs", "--format", "parquet"].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
    const child = Bun.spawn(["script", "-qefc", command, "/dev/null"], { cwd: join(import.meta.dir, "..", ".."), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [output, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    expect(code).toBe(EXIT.usage);
    expect(output.replaceAll("\r", "")).toBe("arrow402: Parquet is binary and stdout is a terminal: use --output FILE, a pipe, or --format table\n");
  });
});
