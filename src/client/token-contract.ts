/**
 * A token's own facts, read from its contract through the buyer's RPC endpoint (viem
 * `readContract` with the ERC-20 ABI): `decimals()` is required, `symbol()` is best effort (some
 * tokens return bytes32). The endpoint must serve the offer's chain — checked with `eth_chainId` —
 * or a right answer about the wrong chain would pass for the truth.
 */
import { createPublicClient, erc20Abi, http, isAddress, type Hex } from "viem";
import { describeEndpoint } from "./rpc.ts";

export type ContractRead = { ok: true; decimals: number; symbol: string | null } | { ok: false; reason: string };

const TIMEOUT_MS = 10_000;

export async function readTokenContract(url: string, network: string, address: string): Promise<ContractRead> {
  const endpoint = `the RPC endpoint for ${network} (${describeEndpoint(url)})`;
  const expected = /^eip155:(\d+)$/.exec(network)?.[1];
  if (expected === undefined) return { ok: false, reason: `${network} is not an EVM network` };
  if (!isAddress(address, { strict: false })) return { ok: false, reason: `${address} is not an address` };
  const client = createPublicClient({ transport: http(url, { timeout: TIMEOUT_MS, retryCount: 1 }) });
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (error) {
    return { ok: false, reason: `${endpoint} did not answer (${shortMessage(error, url)})` };
  }
  if (String(chainId) !== expected) {
    return { ok: false, reason: `${endpoint} serves chain ${chainId}, not ${expected}: give an RPC endpoint of ${network}` };
  }
  const token = address as Hex;
  try {
    const code = await client.getCode({ address: token });
    if (code === undefined || code === "0x") return { ok: false, reason: `there is no contract at ${address} on ${network}` };
    const decimals = await client.readContract({ address: token, abi: erc20Abi, functionName: "decimals" });
    const symbol = await client.readContract({ address: token, abi: erc20Abi, functionName: "symbol" }).catch(() => null);
    return { ok: true, decimals, symbol };
  } catch (error) {
    return { ok: false, reason: `reading decimals() of ${address} through ${endpoint} failed (${shortMessage(error, url)})` };
  }
}

/** viem's one-line message, never the full URL (which may carry an API key). */
function shortMessage(error: unknown, url: string): string {
  const text =
    typeof error === "object" && error !== null && "shortMessage" in error && typeof error.shortMessage === "string"
      ? error.shortMessage
      : error instanceof Error
        ? error.message
        : String(error);
  return (text.split("\n")[0] ?? "").replaceAll(url, describeEndpoint(url)).trim();
}
