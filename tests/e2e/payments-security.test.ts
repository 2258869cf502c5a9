/**
 * No data below its price, through the real server and the devnet (ARCHITECTURE.md §6 "Replay and
 * races", DESIGN.md §17): a settled payment buys one answer — served again only as it was delivered — and
 * "free because empty" is decided and delivered from the same read, even while a writer appends
 * rows to the paid table.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { PRICES, TOKEN_KEY, usePaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const send = (url: string, paymentSignature: string) => fetch(url, { headers: { "PAYMENT-SIGNATURE": paymentSignature } });

describe("a per_row payment presented again", () => {
  test("is served while the result still has the rows paid for, and refused (402, new price, no charge) once rows were added", async () => {
    const sql = "SELECT id, name FROM items WHERE id > 195";
    const url = queryUrl(server.url, sql);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const first = await payer.fetch(url);
    expect((await arrowResult(first)).rows).toHaveLength(5);
    const signature = payer.signatures[0]!;
    const paid = await sandbox.devnet.balanceOf(payer.address);
    expect(paid).toBe(FUNDS - 5n * PRICES.perItem.units);

    const db = new Database(sandbox.databasePath);
    // The server runs in this process: its small reads share a read transaction that a timer of this
    // thread ends within 2 ms, so a write waits for that timer here rather than blocking the thread.
    const write = async (sql: string) => {
      await Bun.sleep(10);
      db.run(sql);
    };
    try {
      await write("INSERT INTO items (id, name, price, category) VALUES (201, 'new-1', 1, 'a'), (202, 'new-2', 2, 'b')");
      const refused = await send(url, signature);
      expect(refused.status).toBe(402);
      const body = await refused.json();
      expect(body.resource.description).toEndWith(" - 7 rows");
      expect(body.accepts.map((offer: { amount: string }) => offer.amount)).toContain(String(7n * PRICES.perItem.units));
      expect(refused.headers.get("PAYMENT-RESPONSE")).toBeNull();

      await write("DELETE FROM items WHERE id > 200");
      const served = await send(url, signature);
      expect((await arrowResult(served)).rows).toHaveLength(5);
      expect(decodeHeader(served.headers.get("PAYMENT-RESPONSE")).success).toBe(true);
    } finally {
      await write("DELETE FROM items WHERE id > 200");
      db.close();
    }
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(paid);
    expect(server.ledgerRows().filter((row) => row.query === sql)).toHaveLength(1);
  });
});

describe("a per_row payment presented again naming another offer", () => {
  // `accepted` is not covered by the signature: a buyer can present a settled per_row payment again
  // with `accepted` set to the table's fixed offer. What was paid is read from the ledger's record.
  test("is still held to the rows it paid for (402 once rows were added), and a fixed-price payment to its answer too", async () => {
    const tag = (fields: Record<string, unknown>) => ({ pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, ...fields });
    const both = await sandbox.serve({
      tables: [{ name: "items", price_tags: [tag({ type: "per_row", amount_per_item: PRICES.perItem.config, is_default: true }), tag({ type: "fixed", amount: PRICES.flat.config })] }],
    });
    const db = new Database(sandbox.databasePath);
    const write = async (sql: string) => {
      await Bun.sleep(10);
      db.run(sql);
    };
    try {
      const sql = "SELECT id, name FROM items WHERE id > 196";
      const url = queryUrl(both.url, sql);
      const required = await paymentRequired(url);
      const offers = required.accepts;
      expect(offers.map((offer) => offer.amount).sort()).toEqual([String(4n * PRICES.perItem.units), String(PRICES.flat.units)].sort());
      const payer = await newPayer(sandbox.devnet, FUNDS);
      expect((await arrowResult(await payer.fetch(url))).rows).toHaveLength(4);
      const perRow = decodeHeader(payer.signatures[0]!);
      expect(perRow.accepted.amount).toBe(String(4n * PRICES.perItem.units));
      const fixedOffer = offers.find((offer) => offer.amount === String(PRICES.flat.units))!;
      const namingFixed = encodePayment({ ...perRow, accepted: fixedOffer });

      await write("INSERT INTO items (id, name, price, category) VALUES (201, 'new-1', 1, 'a'), (202, 'new-2', 2, 'b')");
      for (const signature of [payer.signatures[0]!, namingFixed]) {
        const refused = await send(url, signature);
        expect(refused.status).toBe(402);
        expect((await refused.json()).resource.description).toEndWith(" - 6 rows");
        expect(refused.headers.get("PAYMENT-RESPONSE")).toBeNull();
      }

      // A fixed-price payment of the same query is served again only with the answer it bought.
      const fixedPayer = await newPayer(sandbox.devnet, FUNDS);
      const fixedSignature = encodePayment(await fixedPayer.sign({ ...required, accepts: [fixedOffer] }));
      expect((await arrowResult(await send(url, fixedSignature))).rows).toHaveLength(6);
      await write("DELETE FROM items WHERE id > 200");
      const again = await send(url, fixedSignature);
      expect(again.status).toBe(402);
      expect((await again.json()).error).toBe(PAYMENT_MESSAGES.replayChanged);
    } finally {
      await write("DELETE FROM items WHERE id > 200");
      db.close();
      await both.stop();
    }
  });
});

describe("HEAD never pays", () => {
  test("a HEAD carrying a valid payment gets the unpaid 402's headers; nothing is verified, settled or recorded, and the payment still buys the GET", async () => {
    sandbox.resetProxy();
    const sql = "SELECT id, name FROM items WHERE id <= 3";
    const url = queryUrl(server.url, sql);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const signature = encodePayment(await payer.sign(await paymentRequired(url)));
    const head = await fetch(url, { method: "HEAD", headers: { "PAYMENT-SIGNATURE": signature } });
    expect(head.status).toBe(402);
    expect(decodeHeader(head.headers.get("PAYMENT-REQUIRED")).accepts[0].amount).toBe(String(3n * PRICES.perItem.units));
    expect(head.headers.get("PAYMENT-RESPONSE")).toBeNull();
    const tableHead = await fetch(`${server.url}/api/table/items`, { method: "HEAD", headers: { "PAYMENT-SIGNATURE": signature } });
    expect(tableHead.status).toBe(402);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS);
    expect(server.ledgerRows().filter((row) => row.query === sql)).toHaveLength(0);

    const paid = await send(url, signature);
    expect((await arrowResult(paid)).rows).toHaveLength(3);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - 3n * PRICES.perItem.units);
  });
});

describe("free because empty", () => {
  test("with a writer appending rows every 2 ms, no unpaid request receives a row of the paid table", async () => {
    const tag = { type: "per_row", pay_to: sandbox.devnet.payTo, token: TOKEN_KEY, amount_per_item: PRICES.perItem.config };
    const target = await sandbox.serve({ tables: [{ name: "items", description: "Paid per row, empty results free", price_tags: [tag] }] });
    const writer = Bun.spawn(
      [
        "bun",
        "-e",
        `const { Database } = require("bun:sqlite");
         const db = new Database(${JSON.stringify(sandbox.databasePath)}); db.run("PRAGMA busy_timeout = 5000");
         const insert = db.prepare("INSERT INTO items (id, name, price, category) VALUES (?, 'live', 1, 'a')");
         const end = Date.now() + 4000;
         for (let id = 1000; Date.now() < end; id++) { insert.run(id); Bun.sleepSync(2); }
         db.run("DELETE FROM items WHERE id >= 1000");`,
      ],
      { stderr: "inherit" },
    );
    let free = 0;
    let quoted = 0;
    try {
      const reader = new Database(sandbox.databasePath, { readonly: true });
      reader.run("PRAGMA busy_timeout = 5000");
      const deadline = Date.now() + 3_500;
      const client = async () => {
        while (Date.now() < deadline) {
          // Just past the newest row: empty when counted, but rows keep arriving.
          const newest = Number(reader.query<{ m: number | null }, []>("SELECT max(id) AS m FROM items").get()?.m ?? 0);
          const response = await fetch(queryUrl(target.url, `SELECT id, name FROM items WHERE id > ${newest + 2}`));
          if (response.status === 402) {
            quoted++;
            await response.arrayBuffer();
            continue;
          }
          expect(response.status).toBe(200);
          expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
          expect(tableFromIPC(new Uint8Array(await response.arrayBuffer())).numRows).toBe(0);
          free++;
        }
      };
      await Promise.all(Array.from({ length: 6 }, client));
      reader.close();
    } finally {
      await writer.exited;
      await target.stop();
    }
    expect(free).toBeGreaterThan(10);
    expect(quoted).toBeGreaterThan(0);
  }, 20_000);
});

describe("a payer who spends the payment's nonce while it settles", () => {
  // EIP-3009: cancelAuthorization, or another authorization signed with the same nonce, marks the
  // nonce used without paying this payment; the chain check must not take that for a settlement.
  test.each(["transfer", "cancel"] as const)("by %s: 402, and the same payment presented again is still 402; no data, no ledger row", async (how) => {
    const sql = `SELECT id, price FROM flat_items WHERE id <= ${how === "cancel" ? 11 : 12} LIMIT 100`;
    const url = queryUrl(server.url, sql);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    sandbox.proxy.setBehaviour({
      settle: {
        kind: "hook",
        before: async (body) => {
          const nonce = (body as { paymentPayload: { payload: { authorization: { nonce: `0x${string}` } } } }).paymentPayload.payload.authorization.nonce;
          await sandbox.devnet.spendNonce(payer.privateKey, nonce, how);
        },
      },
    });
    try {
      const refused = await payer.fetch(url);
      expect(refused.status).toBe(402);
      expect((await refused.json()).error).toContain("could not be settled");
    } finally {
      sandbox.proxy.setBehaviour({});
    }
    const again = await send(url, payer.signatures[0]!);
    expect(again.status).toBe(402);
    expect(again.headers.get("content-type")).toStartWith("application/json");
    expect(again.headers.get("PAYMENT-RESPONSE")).toBeNull();
    expect(server.ledgerRows().filter((row) => row.query === sql)).toEqual([]);
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - (how === "transfer" ? 1n : 0n));
  }, 30_000);
});
