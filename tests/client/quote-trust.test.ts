/**
 * What the buyer believes, prints and does for a server's claims about its token (quote.ts): the
 * amount and the budget use only verified decimals (built in, the contract, the buyer's word);
 * the server's decimals and symbol only ever add warnings.
 */
import { describe, expect, test } from "bun:test";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import { offersOf, parseBudget } from "../../src/client/offers.ts";
import { judgeQuote, type Verdict } from "../../src/client/quote.ts";
import type { SellerClaim } from "../../src/client/seller-claims.ts";
import { NO_SOURCES, verifyTokens, type Verification } from "../../src/client/token-verification.ts";
import { tokenKey } from "../../src/client/tokens.ts";

const USDC = BUILTIN_TOKENS["usdc/base_sepolia"]!;
const DEVNET = { network: "eip155:31337", address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
/** Not the USDC of Base Sepolia, but on Base Sepolia. */
const FAKE = { network: "eip155:84532", address: "0x1111111111111111111111111111111111111111" };
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const LIE = 5n * 10n ** 16n;

type Token = { network: string; address: string };

function required(token: Token, amount: bigint): PaymentRequired {
  const offer: PaymentRequirements = {
    scheme: "exact",
    network: token.network as PaymentRequirements["network"],
    amount: String(amount),
    asset: token.address,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2" },
  };
  return { x402Version: 2, resource: { url: "http://seller/api/query?query=q", description: "Query execution payment - 1 rows" }, accepts: [offer] };
}

const contract = (decimals: number, symbol: string | null, shown: string | null = symbol): Verification => ({
  ok: true,
  token: { decimals, symbol: shown, source: "contract" },
  contractSymbol: symbol,
});
const buyer = (decimals: number): Verification => ({ ok: true, token: { decimals, symbol: null, source: "buyer" }, contractSymbol: null });

interface Case {
  name: string;
  token: Token;
  amount: bigint;
  /** What the buyer verified (undefined: nothing, as verifyTokens says without sources). */
  verified?: Verification;
  claim?: SellerClaim;
  budget: string | null;
  yes?: boolean;
  action: Verdict["action"];
  /** The quote line, exactly. */
  quote: string;
  warnings: string[];
  /** Part of the decline message or the question. */
  says?: string;
}

const quoteOf = (price: string, exact: string) => `Quote: ${price} for 1 row, to ${PAY_TO} (${exact})`;
const notUsdcHere = "this client knows no USDC on eip155:31337";

const CASES: Case[] = [
  {
    name: "the lie without a way to check: refused under a budget; the claimed USDC is suspicious",
    token: DEVNET, amount: LIE, claim: { decimals: 18, symbol: "USDC" }, budget: "0.05",
    action: "decline",
    quote: quoteOf(`${LIE} smallest units of token ${DEVNET.address} on eip155:31337`, `${LIE} smallest units`),
    warnings: [`the server calls token ${DEVNET.address} on eip155:31337 "USDC", but it is not USDC (${notUsdcHere})`],
    says: `not paid: the quote of ${LIE} smallest units of token ${DEVNET.address} on eip155:31337 cannot be checked against --max-amount 0.05: token ${DEVNET.address} on eip155:31337 is not built in`,
  },
  {
    name: "the lie, decimals read from the contract: true units, over budget, both lies flagged",
    token: DEVNET, amount: LIE, verified: contract(6, "tUSDC"), claim: { decimals: 18, symbol: "USDC" }, budget: "0.05",
    action: "decline",
    quote: quoteOf("50000000000 tUSDC on eip155:31337", `${LIE} smallest units of ${DEVNET.address} on eip155:31337`),
    warnings: [
      `the server calls token ${DEVNET.address} on eip155:31337 "USDC", but it is not USDC (${notUsdcHere})`,
      `the server says token ${DEVNET.address} on eip155:31337 has 18 decimals; its contract says 6`,
    ],
    says: "over budget: the quote of 50000000000 tUSDC on eip155:31337 is more than --max-amount 0.05",
  },
  {
    name: "an honest server, verified: paid within budget, no warning",
    token: DEVNET, amount: 1200n, verified: contract(6, "tUSDC"), claim: { decimals: 6, symbol: "tUSDC" }, budget: "0.5",
    action: "sign",
    quote: quoteOf("0.0012 tUSDC on eip155:31337", `1200 smallest units of ${DEVNET.address} on eip155:31337`),
    warnings: [],
  },
  {
    name: "the buyer's own decimals; a Cyrillic look-alike of USDC from the server",
    token: DEVNET, amount: 1200n, verified: buyer(6), claim: { decimals: 6, symbol: "USDС" }, budget: "0.0012",
    action: "sign",
    quote: quoteOf(`0.0012 of token ${DEVNET.address} on eip155:31337`, `1200 smallest units of ${DEVNET.address} on eip155:31337`),
    warnings: [`the server calls token ${DEVNET.address} on eip155:31337 "USDС", but it is not USDC (${notUsdcHere})`],
  },
  {
    name: "a contract that calls itself USDC on Base Sepolia is not USDC: its symbol is not shown",
    token: FAKE, amount: 2000n, verified: contract(6, "USDC", null), claim: { decimals: 6, symbol: "USDC" }, budget: "1",
    action: "sign",
    quote: quoteOf(`0.002 of token ${FAKE.address} on Base Sepolia`, `2000 smallest units of ${FAKE.address} on eip155:84532`),
    warnings: [`token ${FAKE.address} on eip155:84532 calls itself "USDC" but is not USDC (USDC on Base Sepolia is ${USDC.address})`],
  },
  {
    name: "the real USDC with a lie about its decimals: the built-in decimals, and a warning",
    token: USDC, amount: 2400n, claim: { decimals: 18, symbol: "USDC" }, budget: "0.0024",
    action: "sign",
    quote: quoteOf("0.0024 USDC on Base Sepolia", `2400 smallest units of ${USDC.address} on eip155:84532`),
    warnings: [`the server says token ${USDC.address} on eip155:84532 has 18 decimals; it is the built-in USDC, with 6`],
  },
  {
    name: "--yes without a budget, unverified: signs what it shows, in smallest units",
    token: DEVNET, amount: LIE, claim: { decimals: 18, symbol: "USDC" }, budget: null, yes: true,
    action: "sign",
    quote: quoteOf(`${LIE} smallest units of token ${DEVNET.address} on eip155:31337`, `${LIE} smallest units`),
    warnings: [`the server calls token ${DEVNET.address} on eip155:31337 "USDC", but it is not USDC (${notUsdcHere})`],
  },
  {
    name: "no budget, no --yes: the question names the verified amount",
    token: DEVNET, amount: LIE, verified: contract(6, "tUSDC"), claim: { decimals: 18, symbol: "tUSDC" }, budget: null,
    action: "confirm",
    quote: quoteOf("50000000000 tUSDC on eip155:31337", `${LIE} smallest units of ${DEVNET.address} on eip155:31337`),
    warnings: [`the server says token ${DEVNET.address} on eip155:31337 has 18 decimals; its contract says 6`],
    says: `Pay 50000000000 tUSDC on eip155:31337 to ${PAY_TO}? [y/N] `,
  },
  {
    name: "no budget, no --yes, unverified: the question in smallest units",
    token: DEVNET, amount: LIE, claim: { decimals: 18, symbol: "USDC" }, budget: null,
    action: "confirm",
    quote: quoteOf(`${LIE} smallest units of token ${DEVNET.address} on eip155:31337`, `${LIE} smallest units`),
    warnings: [`the server calls token ${DEVNET.address} on eip155:31337 "USDC", but it is not USDC (${notUsdcHere})`],
    says: `Pay ${LIE} smallest units of token ${DEVNET.address} on eip155:31337 to ${PAY_TO}? [y/N] `,
  },
];

describe("server claims → what the buyer believes, prints and does", () => {
  test.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const doc = required(c.token, c.amount);
    const key = tokenKey(c.token.network, c.token.address);
    // Without sources, verifyTokens is what says a token is unverified (and how to allow it).
    const verified = await verifyTokens([c.token], NO_SOURCES);
    if (c.verified) verified.set(key, c.verified);
    const claims = new Map(c.claim ? [[key, c.claim]] : []);
    const verdict = judgeQuote(doc, { verified, claims }, offersOf(doc, verified), {
      networks: [],
      budget: c.budget === null ? null : parseBudget(c.budget),
      yes: c.yes ?? false,
    });
    expect(verdict.action).toBe(c.action);
    expect(verdict.lines).toEqual([c.quote, ...c.warnings.map((warning) => `Warning: suspicious: ${warning}`)]);
    if (verdict.action === "decline") expect(verdict.message).toContain(c.says!);
    if (verdict.action === "confirm") expect(verdict.question).toBe(c.says!);
    if (verdict.action !== "decline") expect(verdict.offer.amount).toBe(c.amount);
  });

  test("an unverified token says exactly how to allow it", async () => {
    const verified = await verifyTokens([DEVNET], NO_SOURCES);
    const verification = verified.get(tokenKey(DEVNET.network, DEVNET.address));
    expect(verification).toEqual({
      ok: false,
      reason:
        `token ${DEVNET.address} on eip155:31337 is not built in and its decimals are unverified (the server's word is not taken); ` +
        "pass --rpc eip155:31337=URL (an RPC endpoint of that chain, or set ARROW402_RPC) to read them from the token contract, " +
        `or state them yourself with --token-decimals eip155:31337:${DEVNET.address}=DECIMALS`,
    });
    // A built-in token needs no verification at all.
    expect((await verifyTokens([USDC], NO_SOURCES)).size).toBe(0);
  });

  test("the buyer's statement is used without asking any RPC", async () => {
    const sources = { rpc: new Map([["eip155:31337", "http://127.0.0.1:9"]]), statements: new Map([[tokenKey("*", DEVNET.address), 6]]) };
    const verified = await verifyTokens([DEVNET], sources);
    expect(verified.get(tokenKey(DEVNET.network, DEVNET.address))).toEqual(buyer(6));
  });
});
