import { expect, test } from "bun:test";
import { parseNetworks } from "../../src/client/networks.ts";

test("names, CAIP-2 ids, repeats and comma lists, in order of preference", () => {
  expect(parseNetworks(["base-sepolia,eip155:8453", "Polygon Amoy", "base_sepolia", "avalanche-fuji"])).toEqual({
    ok: true,
    networks: ["eip155:84532", "eip155:8453", "eip155:80002", "eip155:43113"],
  });
  expect(parseNetworks([])).toEqual({ ok: true, networks: [] });
  expect(parseNetworks(["devnet"])).toEqual({ ok: true, networks: ["eip155:31337"] });
});

test("anything else is refused with the names that work", () => {
  const parsed = parseNetworks(["base-sepolia", "mainnet"]);
  expect(parsed.ok).toBe(false);
  expect(!parsed.ok && parsed.reason).toContain("--network 'mainnet'");
  expect(!parsed.ok && parsed.reason).toContain("base-sepolia");
  expect(parseNetworks(["eip155:0"]).ok).toBe(false);
  expect(parseNetworks(["solana:devnet"]).ok).toBe(false);
});
