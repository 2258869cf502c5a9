/** The buyer's ways to verify a token: `--rpc` / ARROW402_RPC, and `--token-decimals`. */
import { describe, expect, test } from "bun:test";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import { describeEndpoint, parseRpcEndpoints } from "../../src/client/rpc.ts";
import { parseTokenStatements, statedDecimals } from "../../src/client/token-statements.ts";

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const RPC_EXAMPLE = "write e.g. eip155:84532=https://sepolia.base.org";

describe("--rpc and ARROW402_RPC", () => {
  test("network ids and names; the variable's entries by spaces or commas; --rpc wins", () => {
    const parsed = parseRpcEndpoints(["base-sepolia=https://flag.example/v2/key", "devnet=http://127.0.0.1:8545"], {
      ARROW402_RPC: " eip155:84532=https://env.example, eip155:8453=https://base.example\n",
    });
    expect(parsed.ok && [...parsed.endpoints]).toEqual([
      ["eip155:84532", "https://flag.example/v2/key"],
      ["eip155:8453", "https://base.example"],
      ["eip155:31337", "http://127.0.0.1:8545"],
    ]);
  });

  test.each([
    ["eip155:84532", `--rpc an entry is not NETWORK=URL: ${RPC_EXAMPLE}`],
    ["=https://x.example", `--rpc '=…' is not NETWORK=URL: ${RPC_EXAMPLE}`],
    ["mainnet=https://x.example", "--rpc 'mainnet=…': 'mainnet' is not a network"],
    ["eip155:1,eip155:2=https://x.example", "--rpc 'eip155:1,eip155:2=…' names more than one network"],
    ["eip155:1=not a url", "--rpc 'eip155:1=…': the URL is not a URL"],
    ["eip155:1=ws://x.example/secret", "--rpc 'eip155:1=…': the RPC URL must be http(s)"],
  ])("%p is refused", (entry, reason) => {
    const parsed = parseRpcEndpoints([entry], {});
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toStartWith(reason);
    expect(!parsed.ok && parsed.reason).not.toContain("secret");
  });

  test("a bad ARROW402_RPC entry is named as such", () => {
    const parsed = parseRpcEndpoints([], { ARROW402_RPC: "eip155:1" });
    expect(!parsed.ok && parsed.reason).toStartWith("ARROW402_RPC entry an entry is not NETWORK=URL");
  });

  test("an endpoint is described by its origin, without path, query or credentials", () => {
    expect(describeEndpoint("https://user:pass@rpc.example:8443/v2/API-KEY?x=1")).toBe("https://rpc.example:8443");
  });
});

describe("--token-decimals", () => {
  test.each([
    [`${TOKEN}=6`, "eip155:31337", 6],
    [`${TOKEN}=6`, "eip155:1", 6],
    [`eip155:31337:${TOKEN}=18`, "eip155:31337", 18],
    [`devnet:${TOKEN.toLowerCase()}=0`, "eip155:31337", 0],
  ])("%s holds on %s", (value, network, decimals) => {
    const parsed = parseTokenStatements([value]);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(statedDecimals(parsed.statements, network, TOKEN)).toBe(decimals);
  });

  test("a statement for one network does not hold on another", () => {
    const parsed = parseTokenStatements([`eip155:31337:${TOKEN}=6`]);
    expect(parsed.ok && statedDecimals(parsed.statements, "eip155:1", TOKEN)).toBeNull();
  });

  test.each([
    [`${TOKEN}`, "is not [NETWORK:]ADDRESS=DECIMALS"],
    [`${TOKEN}=256`, "is not [NETWORK:]ADDRESS=DECIMALS"],
    [`${TOKEN}=six`, "is not [NETWORK:]ADDRESS=DECIMALS"],
    ["USDC=6", "is not [NETWORK:]ADDRESS=DECIMALS"],
    [`mainnet:${TOKEN}=6`, "'mainnet' is not one network"],
    [`eip155:84532${TOKEN}=6`, "'eip155:8453' is not one network"],
    [`base-sepolia:${BUILTIN_TOKENS["usdc/base_sepolia"]!.address}=18`, "is the built-in USDC on Base Sepolia, with 6 decimals"],
  ])("%s is refused", (value, reason) => {
    const parsed = parseTokenStatements([value]);
    expect(!parsed.ok && parsed.reason).toContain(reason);
  });
});
