/** Offer choice: by value, then by the allowed networks' order, then the server's order; budgets exact. */
import { describe, expect, test } from "bun:test";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import { chooseOffer, offersOf, parseBudget, withinBudget, type Budget, type Offer } from "../../src/client/offers.ts";
import type { Verification } from "../../src/client/token-verification.ts";
import { tokenKey } from "../../src/client/tokens.ts";

const BASE_SEPOLIA = BUILTIN_TOKENS["usdc/base_sepolia"]!;
const POLYGON_AMOY = BUILTIN_TOKENS["usdc/polygon_amoy"]!;
const DAI = { network: "eip155:84532", address: "0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb" };
const DEVNET = { network: "eip155:31337", address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

function requirement(token: { network: string; address: string }, amount: bigint, scheme = "exact"): PaymentRequirements {
  return {
    scheme,
    network: token.network as PaymentRequirements["network"],
    amount: String(amount),
    asset: token.address,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2" },
  };
}

/** Offers whose listed tokens are verified with the given decimals (as read from their contracts). */
function offers(accepts: PaymentRequirements[], decimals: [string, number][] = []): Offer[] {
  const required: PaymentRequired = { x402Version: 2, resource: { url: "http://x/api/query?query=q" }, accepts };
  const verified = new Map<string, Verification>(
    decimals.map(([key, value]) => [key, { ok: true, token: { decimals: value, symbol: null, source: "contract" }, contractSymbol: null }]),
  );
  return offersOf(required, verified);
}

const budget = (text: string): Budget => parseBudget(text)!;
const any = { networks: [], budget: null };

describe("chooseOffer", () => {
  test("the cheapest offer wins whatever the server's order", () => {
    const choice = chooseOffer(offers([requirement(BASE_SEPOLIA, 3000n), requirement(POLYGON_AMOY, 2000n), requirement(BASE_SEPOLIA, 2500n)]), any);
    expect(choice.kind === "chosen" && choice.offer.position).toBe(1);
  });

  test("tokens with different decimals are compared by value, not by smallest units", () => {
    // 0.002 USDC (2000, 6 decimals) against 0.001 DAI (10^15, 18 decimals): DAI is cheaper.
    const list = offers([requirement(BASE_SEPOLIA, 2000n), requirement(DAI, 10n ** 15n)], [[tokenKey(DAI.network, DAI.address), 18]]);
    const choice = chooseOffer(list, any);
    expect(choice.kind === "chosen" && choice.offer.token.address).toBe(DAI.address);
  });

  test("equal prices: the earlier --network wins, then the server's order", () => {
    const list = offers([requirement(BASE_SEPOLIA, 2000n), requirement(POLYGON_AMOY, 2000n)]);
    const preferPolygon = chooseOffer(list, { networks: [POLYGON_AMOY.network, BASE_SEPOLIA.network], budget: null });
    expect(preferPolygon.kind === "chosen" && preferPolygon.offer.requirement.network).toBe(POLYGON_AMOY.network);
    const serverOrder = chooseOffer(list, any);
    expect(serverOrder.kind === "chosen" && serverOrder.offer.position).toBe(0);
  });

  test("--network excludes the others, even when they are cheaper", () => {
    const list = offers([requirement(BASE_SEPOLIA, 1000n), requirement(POLYGON_AMOY, 5000n)]);
    const choice = chooseOffer(list, { networks: [POLYGON_AMOY.network], budget: null });
    expect(choice.kind === "chosen" && choice.offer.requirement.network).toBe(POLYGON_AMOY.network);
    const none = chooseOffer(list, { networks: ["eip155:8453"], budget: null });
    expect(none).toEqual({ kind: "no-allowed-network", offered: ["exact on eip155:84532", "exact on eip155:80002"] });
  });

  test("only exact offers on EVM networks can be signed", () => {
    const list = offers([requirement(BASE_SEPOLIA, 1000n, "upto"), requirement({ network: "solana:devnet", address: DAI.address }, 1n)]);
    expect(chooseOffer(list, any)).toEqual({ kind: "unsupported", offered: ["upto on eip155:84532", "exact on solana:devnet"] });
  });

  test("a quote equal to the budget is paid; one unit more is over budget", () => {
    const list = offers([requirement(BASE_SEPOLIA, 2400n)]);
    expect(chooseOffer(list, { networks: [], budget: budget("0.0024") }).kind).toBe("chosen");
    const over = chooseOffer(list, { networks: [], budget: budget("0.002399") });
    expect(over.kind).toBe("over-budget");
  });

  test("an offer that cannot be checked against the budget is passed over for one that can", () => {
    // The devnet token's decimals are unverified: it ranks by the server's order (first) but a budget
    // cannot be checked against it, so the USDC offer within the budget is chosen.
    const list = offers([requirement(DEVNET, 1200n), requirement(BASE_SEPOLIA, 3000n)]);
    expect(chooseOffer(list, any).kind === "chosen" && chooseOffer(list, any)).toMatchObject({ offer: { position: 0 } });
    const choice = chooseOffer(list, { networks: [], budget: budget("0.5") });
    expect(choice.kind === "chosen" && choice.offer.requirement.asset).toBe(BASE_SEPOLIA.address);
  });

  test("a token with unverified decimals is chosen without a budget, never under one", () => {
    const list = offers([requirement(DEVNET, 1200n)]);
    expect(chooseOffer(list, any).kind).toBe("chosen");
    const refused = chooseOffer(list, { networks: [], budget: budget("1000000") });
    expect(refused.kind).toBe("unverified");
    const known = offers([requirement(DEVNET, 1200n)], [[tokenKey(DEVNET.network, DEVNET.address), 6]]);
    expect(chooseOffer(known, { networks: [], budget: budget("0.0012") }).kind).toBe("chosen");
  });
});

describe("budgets", () => {
  test("parseBudget takes decimal token units only", () => {
    expect(parseBudget("0.05")).toEqual({ text: "0.05", units: 5n, scale: 2 });
    expect(parseBudget("12")).toEqual({ text: "12", units: 12n, scale: 0 });
    for (const bad of ["-1", "1e3", "0x10", "", ".5", "1.", "one"]) expect(parseBudget(bad)).toBeNull();
  });

  test("a budget finer than the token's decimals still compares exactly", () => {
    const [offer] = offers([requirement(BASE_SEPOLIA, 1n)]); // 0.000001 USDC
    expect(withinBudget(offer!, budget("0.0000009"))).toBe(false);
    expect(withinBudget(offer!, budget("0.0000010"))).toBe(true);
  });
});
