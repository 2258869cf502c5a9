/** The devnet's test token as the config loader would resolve it, and fresh funded payers. */
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { TokenInfo } from "../../src/config/types.ts";
import type { Devnet } from "../../devnet/index.ts";

export function devnetToken(devnet: Devnet): TokenInfo {
  return {
    key: "usdc/devnet",
    chainId: devnet.chainId,
    network: devnet.network,
    address: getAddress(devnet.token.address),
    name: devnet.token.name,
    version: devnet.token.version,
    decimals: devnet.token.decimals,
    networkLabel: "Devnet",
    symbol: "USDC",
  };
}

/** A new account holding `amount` test tokens, so each test starts from known balances. */
export async function fundedAccount(devnet: Devnet, amount: bigint) {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  if (amount > 0n) await devnet.fund(account.address, amount);
  return { privateKey, account };
}

/**
 * Puts contract code at `address` (anvil_setCode): from then on the chain, the facilitator and the
 * payer check see a deployed smart wallet there. The default code (STOP) approves no signature.
 */
export async function deployCodeAt(devnet: Devnet, address: string, code = "0x00"): Promise<void> {
  const response = await fetch(devnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setCode", params: [address, code] }),
  });
  const reply = (await response.json()) as { error?: { message: string } };
  if (reply.error !== undefined) throw new Error(`anvil_setCode failed: ${reply.error.message}`);
}
