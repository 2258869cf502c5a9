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
