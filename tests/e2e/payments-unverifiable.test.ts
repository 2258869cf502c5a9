/**
 * Payment-shaped requests that can never be verified (DESIGN.md §17, ARCHITECTURE.md §6 step 4),
 * through the real listening server, the devnet chain and the real x402 facilitator behind the
 * counting proxy: a signature only a smart wallet could make from an address that is none, and an
 * unfunded key's correct signature, cost no /verify call and no ledger write (a trigger in the
 * ledger file records every row written); a funded payer pays as before. Refused payments are
 * bounded per client by default (`limits.max_refused_payments_per_minute`, 10), and paid and 402
 * answers say `Cache-Control: private, no-store`, over HTTP and MCP; free answers do not.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { connectMcp, paymentRequiredOf, receiptOf } from "../mcp/support.ts";
import { type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 50 AND 54 LIMIT 10";
const PER_ROW_SQL = "SELECT id, name FROM items WHERE id BETWEEN 50 AND 54";
const FREE_SQL = "SELECT * FROM kinds";
const NO_STORE = "private, no-store";

/**
 * Records every row the server inserts into or deletes from its ledger's `payments` table (an
 * attempt is inserted before /settle, and deleted when nothing can have moved for it).
 */
function watchLedgerWrites(target: PaidServer) {
  const ledger = new Database(target.ledgerPath);
  ledger.run("CREATE TABLE IF NOT EXISTS writes_seen (kind TEXT, payer TEXT)");
  ledger.run("CREATE TRIGGER IF NOT EXISTS seen_insert AFTER INSERT ON payments BEGIN INSERT INTO writes_seen VALUES ('insert', NEW.payer); END");
  ledger.run("CREATE TRIGGER IF NOT EXISTS seen_delete AFTER DELETE ON payments BEGIN INSERT INTO writes_seen VALUES ('delete', OLD.payer); END");
  ledger.run("DELETE FROM writes_seen");
  return {
    of: (payer: string) =>
      ledger
        .query<{ kind: string }, [string]>("SELECT kind FROM writes_seen WHERE lower(payer) = lower(?) ORDER BY rowid")
        .all(payer)
        .map((row) => row.kind),
    all: () => ledger.query<{ n: number }, []>("SELECT count(*) AS n FROM writes_seen").get()!.n,
    close: () => ledger.close(),
  };
}

/**
 * A payment made without any key: the first offer of the 402 accepted, an authorization from
 * `from` filled in by hand, and `signature` (bytes no key made).
 */
async function keylessHeader(url: string, from: Hex, signature: Hex): Promise<string> {
  const quoted = await paymentRequired(url);
  const accepted = quoted.accepts[0]!;
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from,
    to: accepted.payTo,
    value: accepted.amount,
    validAfter: String(now - 60),
    validBefore: String(now + 240),
    nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`,
  };
  return encodePayment({ x402Version: 2, resource: quoted.resource, accepted, payload: { signature, authorization } });
}

const someAddress = () => privateKeyToAccount(generatePrivateKey()).address;

describe("a payment that can never be verified costs no facilitator call and no ledger write", () => {
  test("50 keyless requests (signatures no key made, from addresses without a contract): 402 each naming the problem, 0 /verify calls", async () => {
    // The per-client budget off, so that every one of them is answered (and not 429).
    const open = await sandbox.serve({ limits: { max_refused_payments_per_minute: 0 } });
    const writes = watchLedgerWrites(open);
    try {
      const url = queryUrl(open.url, FIXED_SQL);
      // The lengths a smart wallet's signature can have; the funded payer's own address among the `from`s.
      const funded = await newPayer(sandbox.devnet, FUNDS);
      const lengths = [1, 64, 66, 97, 200, 1024];
      for (let i = 0; i < 50; i++) {
        const from = i % 5 === 0 ? funded.address : someAddress();
        const signature = `0x${"ab".repeat(lengths[i % lengths.length]!)}` as Hex;
        const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": await keylessHeader(url, from, signature) } });
        expect(response.status).toBe(402);
        expect(response.headers.get("cache-control")).toBe(NO_STORE);
        expect((await response.json()).error).toBe(PAYMENT_MESSAGES.notSmartWallet(from));
      }
      expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
      expect(writes.all()).toBe(0);
    } finally {
      writes.close();
      await open.stop();
    }
  }, 60_000);

  test("an unfunded key's correct signature: 402 saying what it holds and what the offer costs; 0 /verify calls, no attempt written", async () => {
    const writes = watchLedgerWrites(server);
    try {
      const payer = await newPayer(sandbox.devnet, 0n);
      const response = await payer.fetch(queryUrl(server.url, FIXED_SQL));
      expect(response.status).toBe(402);
      expect(payer.signatures).toHaveLength(1);
      const from = decodeHeader(payer.signatures[0]!).payload.authorization.from;
      expect(getAddress(from)).toBe(payer.address);
      expect((await response.json()).error).toBe(PAYMENT_MESSAGES.insufficientBalance(from, "0 tUSDC", "0.05 tUSDC"));
      expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
      expect(writes.of(payer.address)).toEqual([]);
    } finally {
      writes.close();
    }
  });

  test("a funded payer pays as before: one /verify, one /settle, its attempt written then settled", async () => {
    const writes = watchLedgerWrites(server);
    try {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const response = await payer.fetch(queryUrl(server.url, FIXED_SQL));
      const { rows } = await arrowResult(response);
      expect(rows.map((row) => row.id)).toEqual(sandbox.sqliteRows(FIXED_SQL).map((row) => row.id));
      expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
      expect(writes.of(payer.address)).toEqual(["insert"]);
      expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - 50_000n);
    } finally {
      writes.close();
    }
  });
});

test("refused payments are bounded per client by default: the 11th within a minute is 429, before any chain read or facilitator call", async () => {
  const fresh = await sandbox.serve();
  try {
    expect(fresh.config.limits.maxRefusedPaymentsPerMinute).toBe(10);
    const url = queryUrl(fresh.url, FIXED_SQL);
    for (let i = 0; i < 10; i++) {
      const payer = await newPayer(sandbox.devnet, 0n);
      const refused = await payer.fetch(url);
      expect(refused.status).toBe(402);
      expect((await refused.json()).error).toContain("insufficient balance");
    }
    const payer = await newPayer(sandbox.devnet, 0n);
    const limited = await payer.fetch(url);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await limited.text()).toBe(
      `10 payments from this client were refused or are being checked within a minute, 10 being the most (limits.max_refused_payments_per_minute): retry in ${retryAfter} s with a payment from a funded wallet`,
    );
    // A quote is still answered.
    expect((await fetch(url)).status).toBe(402);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
  } finally {
    await fresh.stop();
  }
}, 30_000);

describe("Cache-Control", () => {
  test.each([
    ["a query", PER_ROW_SQL, (base: string) => queryUrl(base, PER_ROW_SQL)],
    ["the table document", null, (base: string) => `${base}/api/table/items`],
  ])("%s: every 402 (a quote, HEAD, a refused payment) and the paid 200 say private, no-store", async (_name, _sql, urlOf) => {
    const url = urlOf(server.url);
    for (const method of ["GET", "HEAD"]) {
      const quote = await fetch(url, { method });
      expect(quote.status).toBe(402);
      expect(quote.headers.get("cache-control")).toBe(NO_STORE);
    }
    // Refused before anything is verified: signed for another amount.
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const signed = (await payer.sign(await paymentRequired(url))) as Record<string, any>;
    const authorization = { ...signed.payload.authorization, value: "1" };
    const refused = await fetch(url, { headers: { "PAYMENT-SIGNATURE": encodePayment({ ...signed, payload: { ...signed.payload, authorization } }) } });
    expect(refused.status).toBe(402);
    expect(refused.headers.get("cache-control")).toBe(NO_STORE);

    const paid = await payer.fetch(url);
    expect(paid.status).toBe(200);
    expect(paid.headers.get("PAYMENT-RESPONSE")).not.toBeNull();
    expect(paid.headers.get("cache-control")).toBe(NO_STORE);
    await paid.arrayBuffer();
  });

  test.each([
    ["a query of a free table", (base: string) => queryUrl(base, FREE_SQL)],
    ["a free table's document", (base: string) => `${base}/api/table/kinds`],
  ])("%s: no Cache-Control, as before", async (_name, urlOf) => {
    const response = await fetch(urlOf(server.url));
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBeNull();
    await response.arrayBuffer();
  });

  test("MCP: the POST that answers a PaymentRequired or a paid result says private, no-store; a free one does not", async () => {
    const seen: (string | null)[] = [];
    const mcp = await connectMcp(server.url, {
      handle: async (request) => {
        const response = await fetch(request);
        seen.push(response.headers.get("cache-control"));
        return response;
      },
    });
    try {
      const last = () => seen.at(-1);
      await mcp.call("list_tables");
      expect(last()).toBeNull();
      await mcp.call("query", { sql: FREE_SQL });
      expect(last()).toBeNull();
      const required = paymentRequiredOf(await mcp.call("query", { sql: PER_ROW_SQL }));
      expect(last()).toBe(NO_STORE);
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const paid = await mcp.call("query", { sql: PER_ROW_SQL }, { "x402/payment": await payer.sign(required) });
      expect(receiptOf(paid)?.success).toBe(true);
      expect(last()).toBe(NO_STORE);
    } finally {
      await mcp.close();
    }
  });
});
