/** Price tags as the discovery and table endpoints show them (spec "Resources"; ARCHITECTURE.md §3). */
import { expect, test } from "bun:test";
import { resolveConfig } from "../../src/config/load.ts";
import { queriesArePaid } from "../../src/payment/terms.ts";
import { priceTagView, summaryPricing } from "../../src/service/pricing-view.ts";
import { PAY_TO } from "../support/fixtures.ts";

const config = resolveConfig(
  {
    database: { sqlite: "x.sqlite" },
    tokens: { "usdc/devnet": { chain: "31337", address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", name: "Test USD Coin", version: "2", decimals: 6, symbol: "tUSDC" } },
    tables: [
      {
        name: "t",
        description: "t",
        price_tags: [
          { type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.002", min_items: 10, max_items: 100, min_total_amount: "0.05" },
          { type: "fixed", pay_to: PAY_TO, token: "usdc/devnet", amount: "1.5", is_default: true },
          { type: "metadata_price", pay_to: PAY_TO, token: "usdc/base_sepolia", amount: "0.01" },
        ],
      },
    ],
  },
  { baseDir: "/tmp", env: {} },
);
const tags = config.tables[0]!.priceTags;

test("the table endpoint shows every tag with its pricing object and token", () => {
  expect(tags.map(priceTagView)).toEqual([
    {
      pay_to: PAY_TO,
      pricing: { model: "PerRow", amount_per_item: "2000", min_items: 10, max_items: 100, min_total_amount: "50000", quote: "count" },
      token: { chain: "84532", address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", decimals: 6, transfer_method: "eip3009", symbol: "USDC" },
      is_default: false,
    },
    {
      pay_to: PAY_TO,
      pricing: { model: "Fixed", amount: "1500000" },
      token: { chain: "31337", address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", decimals: 6, transfer_method: "eip3009", symbol: "tUSDC" },
      is_default: true,
    },
    {
      pay_to: PAY_TO,
      pricing: { model: "MetadataPrice", amount: "10000" },
      token: { chain: "84532", address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", decimals: 6, transfer_method: "eip3009", symbol: "USDC" },
      is_default: false,
    },
  ]);
});

test("the discovery summary omits metadata prices", () => {
  expect(summaryPricing(tags)).toEqual([
    { model: "PerRow", amount_per_item: "2000", quote: "count", token_address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", chain: "84532", pay_to: PAY_TO },
    { model: "Fixed", amount: "1500000", token_address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", chain: "31337", pay_to: PAY_TO },
  ]);
  expect(queriesArePaid(tags)).toBe(true);
  expect(queriesArePaid(tags.filter((t) => t.type === "metadata_price"))).toBe(false);
});
