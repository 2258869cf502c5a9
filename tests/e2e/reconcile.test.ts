/**
 * `arrow402 payments --reconcile` (ARCHITECTURE.md §6 "Crashes") on real attempts left by a real server
 * on the devnet, in a SQLite ledger and in a PostgreSQL one: the facilitator settles and its answer
 * is lost (a 502 after the transfer), or it fails before doing anything (503); then the command
 * resolves each attempt through the chain, or says why it leaves it.
 *
 * Order matters: the chain is moved forward (10,001 empty blocks; then its clock, past every
 * authorization) only after the payments that must still settle have been made.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getAddress } from "viem";
import { loadConfigFile } from "../../src/config/load.ts";
import { LOG_LOOKBACK_BLOCKS, LOG_WINDOW_BLOCKS } from "../../src/payment/chain.ts";
import { decodePaymentSignature, paymentKey } from "../../src/payment/wire.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { storedPayments, type LedgerLocation, type StoredPayment } from "../support/ledger-rows.ts";
import { PRICES, SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox } from "../support/paid-server.ts";
import { newPayer, queryUrl } from "../support/paying.ts";
import { usePostgres } from "../support/postgres.ts";
import { freePort, writeServeConfig, type ServeConfig } from "../support/serve-process.ts";

const FUNDS = 1_000_000n;
const PRICE = PRICES.flat.units;
const ROOT = join(import.meta.dir, "../..");

const postgres = usePostgres();
let sandbox: PaidSandbox;

/** One ledger (SQLite or PostgreSQL), the server writing it, and reconcile configs over it. */
interface Ledger {
  name: string;
  location: LedgerLocation;
  server: RunningServer;
  /** rpc_urls naming the devnet's anvil. */
  withRpc: ServeConfig;
  /** No rpc_urls entry for the devnet's chain. */
  withoutRpc: ServeConfig;
  /** rpc_urls naming a port nobody listens on. */
  deadRpc: ServeConfig;
  attempts: Record<string, { key: string; payer: `0x${string}`; transaction?: string }>;
}

const ledgers: Ledger[] = [];
let deadRpcUrl: string;

async function openLedger(name: string, ledger: { path: string } | { url: string }, location: LedgerLocation): Promise<Ledger> {
  const config = (dir: string, rpcUrl?: string | null) =>
    writeServeConfig({
      dir: join(sandbox.dir, name, dir),
      devnet: sandbox.devnet,
      databasePath: sandbox.databasePath,
      facilitatorUrl: sandbox.proxy.url,
      ledger,
      rpcUrl,
    });
  const withRpc = await config("rpc");
  return {
    name,
    location,
    server: await startServer(loadConfigFile(withRpc.path)),
    withRpc,
    withoutRpc: await config("no-rpc", null),
    deadRpc: await config("dead-rpc", deadRpcUrl),
    attempts: {},
  };
}

/**
 * A real payment whose settlement stays unconfirmed: `lost` — the facilitator settles on chain, then
 * answers 502 (the server cannot know the money moved); `unsettled` — it answers 503 before acting.
 */
async function leaveAttempt(ledger: Ledger, label: string, maxId: number, kind: "lost" | "unsettled"): Promise<void> {
  const payer = await newPayer(sandbox.devnet, FUNDS);
  sandbox.resetProxy();
  sandbox.proxy.setBehaviour({
    settle: kind === "lost" ? { kind: "rewrite", status: 502, rewrite: () => ({ error: "bad gateway" }) } : { kind: "status", status: 503 },
  });
  try {
    const response = await payer.fetch(queryUrl(ledger.server.url, `SELECT id FROM flat_items WHERE id <= ${maxId} LIMIT 100`));
    expect(response.status).toBe(500);
  } finally {
    sandbox.proxy.setBehaviour({});
  }
  const key = paymentKey(decodePaymentSignature(payer.signatures.at(-1)!));
  const transaction = (sandbox.proxy.upstream.find((reply) => reply.endpoint === "settle")?.body as { transaction?: string } | undefined)?.transaction;
  expect(await sandbox.devnet.balanceOf(payer.address)).toBe(kind === "lost" ? FUNDS - PRICE : FUNDS);
  ledger.attempts[label] = { key, payer: payer.address, ...(transaction === undefined ? {} : { transaction }) };
}

function reconcile(config: ServeConfig, ...extra: string[]) {
  const cli = Bun.spawnSync(["bun", join(ROOT, "src/main.ts"), "payments", "--config", config.path, ...extra], { stdout: "pipe", stderr: "pipe" });
  return { code: cli.exitCode, out: cli.stdout.toString(), err: cli.stderr.toString() };
}

/** The per-attempt block of the output: from its outcome line to the next. */
function blockFor(out: string, payer: string): string {
  const blocks = out.split(/\n(?=(?:CONFIRMED|REMOVED|LEFT|FAILED)  )/);
  const found = blocks.filter((block) => block.includes(`payer ${getAddress(payer)}`));
  expect(found).toHaveLength(1);
  return found[0]!;
}

async function rows(ledger: Ledger): Promise<Map<string, StoredPayment>> {
  return new Map((await storedPayments(ledger.location)).map((row) => [row.payment_key, row]));
}

async function rpc(method: string, params: unknown[]): Promise<void> {
  const response = await fetch(sandbox.devnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const reply = (await response.json()) as { error?: unknown };
  if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
}

beforeAll(async () => {
  sandbox = await startPaidSandbox();
  deadRpcUrl = `http://127.0.0.1:${await freePort()}`;
  const sqlitePath = join(sandbox.dir, "sqlite-ledger", "ledger.sqlite");
  ledgers.push(await openLedger("sqlite", { path: sqlitePath }, { path: sqlitePath }));
  ledgers.push(await openLedger("postgres", { url: postgres.url }, { url: postgres.url }));
  for (const ledger of ledgers) {
    await leaveAttempt(ledger, "lost", 3, "lost");
    await leaveAttempt(ledger, "unsettled", 4, "unsettled");
  }
}, SANDBOX_START_TIMEOUT_MS + 60_000);

afterAll(async () => {
  for (const ledger of ledgers) await ledger.server.stop();
  await sandbox?.stop();
});

describe.each(["sqlite", "postgres"])("%s ledger", (name) => {
  const ledger = () => ledgers.find((l) => l.name === name)!;

  test("no rpc_urls entry for the chain: every attempt is left, naming the setting to add; exit 0, nothing changed", async () => {
    const before = await rows(ledger());
    const result = reconcile(ledger().withoutRpc, "--reconcile");
    expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
    expect(result.out).toContain("Reconciling 2 unconfirmed settlements in");
    for (const attempt of Object.values(ledger().attempts)) {
      const block = blockFor(result.out, attempt.payer);
      expect(block).toStartWith("LEFT  flat_items  0.05 tUSDC on eip155:31337");
      expect(block).toContain(`there is no JSON-RPC endpoint for chain 31337: left unconfirmed; add rpc_urls: { "31337": <the chain's JSON-RPC URL> } to the config`);
    }
    expect(result.out).toContain("Done: 0 confirmed settled, 0 removed, 2 left unconfirmed.");
    expect(await rows(ledger())).toEqual(before);
  });

  test("an RPC endpoint that fails: every attempt is left, naming the endpoint and the setting; exit 0, nothing changed", async () => {
    const before = await rows(ledger());
    const result = reconcile(ledger().deadRpc, "--reconcile");
    expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
    for (const attempt of Object.values(ledger().attempts)) {
      const block = blockFor(result.out, attempt.payer);
      expect(block).toStartWith("LEFT  ");
      expect(block).toContain(`the JSON-RPC endpoint for chain 31337 (${deadRpcUrl}) failed: `);
      expect(block).toContain(`check rpc_urls "31337"`);
    }
    expect(await rows(ledger())).toEqual(before);
  });

  test("used on chain: confirmed with the transaction of its AuthorizationUsed log; not used and still valid: left until validBefore", async () => {
    const { lost, unsettled } = ledger().attempts;
    // The transfer is then more than one window of log queries back (LOG_WINDOW_BLOCKS).
    await rpc("anvil_mine", [`0x${(LOG_WINDOW_BLOCKS + 500n).toString(16)}`, "0x0"]);
    const result = reconcile(ledger().withRpc, "--reconcile");
    expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
    expect(lost!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(blockFor(result.out, lost!.payer)).toContain(`CONFIRMED  flat_items`);
    expect(blockFor(result.out, lost!.payer)).toContain(`used on chain in transaction ${lost!.transaction} (mined `);
    const left = blockFor(result.out, unsettled!.payer);
    expect(left).toStartWith("LEFT  ");
    expect(left).toMatch(/not used on chain yet, and its authorization can still be used until \d{4}-\d\d-\d\dT[\d:.]+Z \(the chain's latest block is at /);
    expect(result.out).toContain("Done: 1 confirmed settled, 0 removed, 1 left unconfirmed.");

    const stored = await rows(ledger());
    expect(stored.get(lost!.key)).toMatchObject({ status: "settled", tx_hash: lost!.transaction });
    expect(stored.get(unsettled!.key)).toMatchObject({ status: "settling", tx_hash: "" });
    expect(await sandbox.transfersIn(lost!.transaction as `0x${string}`)).toEqual([
      { from: getAddress(lost!.payer), to: getAddress(sandbox.devnet.payTo), value: PRICE },
    ]);
    // The listing agrees: one settled payment, one unconfirmed attempt.
    const listed = reconcile(ledger().withRpc);
    expect(listed.out).toContain("Settled payments (1):");
    expect(listed.out).toContain(`tx ${lost!.transaction}`);
    expect(listed.out).toContain("Unconfirmed settlements (1)");
  });
});

describe("when the chain has moved on", () => {
  test(`a transfer more than ${LOG_LOOKBACK_BLOCKS} blocks back: found between the attempt and its validBefore, confirmed with its transaction`, async () => {
    for (const ledger of ledgers) await leaveAttempt(ledger, "old", 5, "lost");
    await rpc("anvil_mine", [`0x${(LOG_LOOKBACK_BLOCKS + 1n).toString(16)}`, "0x0"]);
    for (const ledger of ledgers) {
      const old = ledger.attempts.old!;
      expect(old.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const result = reconcile(ledger.withRpc, "--reconcile");
      expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
      const block = blockFor(result.out, old.payer);
      expect(block).toStartWith("CONFIRMED  ");
      expect(block).toContain(`used on chain in transaction ${old.transaction} (mined `);
      expect((await rows(ledger)).get(old.key)).toMatchObject({ status: "settled", tx_hash: old.transaction });
    }
  }, 60_000);

  test("past every validBefore: an attempt never used on chain is removed, saying it can never move money; a second run has nothing to do", async () => {
    await rpc("evm_increaseTime", [400]);
    await rpc("evm_mine", []);
    for (const ledger of ledgers) {
      const { unsettled } = ledger.attempts;
      const result = reconcile(ledger.withRpc, "--reconcile");
      expect({ code: result.code, err: result.err }).toEqual({ code: 0, err: "" });
      const block = blockFor(result.out, unsettled!.payer);
      expect(block).toStartWith("REMOVED  ");
      expect(block).toMatch(/never used on chain, and its authorization expired at \S+ \(the chain's latest block is at \S+\), so it can never move money: removed\./);
      expect(result.out).toContain("Done: 0 confirmed settled, 1 removed, 0 left unconfirmed.");
      const stored = await rows(ledger);
      expect(stored.has(unsettled!.key)).toBe(false);
      expect([...stored.values()].map((row) => row.status)).toEqual(["settled", "settled"]);
      expect(await sandbox.devnet.balanceOf(unsettled!.payer)).toBe(FUNDS);
      expect(reconcile(ledger.withRpc, "--reconcile").out).toContain("No unconfirmed settlements in");
    }
  });
});

describe("failures", () => {
  test("the ledger cannot be reached: exit 1 with one line naming it and what to check", async () => {
    const pg = ledgers.find((l) => l.name === "postgres")!;
    await postgres.server.halt();
    try {
      const result = reconcile(pg.withRpc, "--reconcile");
      expect(result.code).toBe(1);
      expect(result.out).toBe("");
      expect(result.err).toStartWith(`arrow402: cannot open the payment ledger at ${postgres.url}: `);
      expect(result.err).toContain("check ledger.url");
    } finally {
      await postgres.server.resume();
    }
  });

  test("--since with --reconcile is a usage error (exit 2); --help names --reconcile", () => {
    const sqlite = ledgers.find((l) => l.name === "sqlite")!;
    const result = reconcile(sqlite.withRpc, "--reconcile", "--since", "2026-01-01");
    expect(result.code).toBe(2);
    expect(result.err).toContain("use one or the other");
    const help = Bun.spawnSync(["bun", join(ROOT, "src/main.ts"), "--help"], { stdout: "pipe" }).stdout.toString();
    expect(help).toContain("arrow402 payments   [--config FILE] --reconcile");
  });
});
