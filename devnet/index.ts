/**
 * The local paid sandbox ("devnet", ARCHITECTURE.md §6, §10): an anvil chain, our EIP-3009 test token,
 * and a real x402 V2 facilitator that settles on that chain. Tests and `bun run devnet` both use
 * it to run the whole paid flow offline with real signatures and real on-chain transfers.
 *
 * Accounts: anvil's well-known dev account 0 deploys and owns the token (mints), account 1 is
 * the facilitator signer (pays settlement gas). The payer, the recipient and the unfunded
 * account are keys derived from fixed labels, so they hold no ETH — under EIP-3009 the payer
 * only signs — and stay the same from run to run, like the token address (the deployer's first
 * contract), so a printed config keeps working after a restart.
 */
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  keccak256,
  parseSignature,
  toHex,
  type Abi,
  type Hex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { anvil } from "viem/chains";
import { startChain, DEVNET_CHAIN_ID } from "./chain.ts";
import { compileSandboxContracts } from "./compile.ts";
import { DEVNET_NETWORK, startFacilitatorServer } from "./facilitator.ts";
import { authorizeTransfer } from "./authorize.ts";
import { freshNonceManager } from "./nonces.ts";

export { DEVNET_CHAIN_ID } from "./chain.ts";
export { DEVNET_NETWORK } from "./facilitator.ts";
export { authorizeTransfer } from "./authorize.ts";
export { devnetConfigYaml } from "./config.ts";
export { startFacilitatorProxy } from "./proxy.ts";
export type { FacilitatorProxy, ProxyBehaviour, EndpointBehaviour } from "./proxy.ts";

export interface DevnetAccount {
  privateKey: Hex;
  address: Hex;
}

/** The `tokens:` entry for arrow402's YAML config (ARCHITECTURE.md §2). */
/** An EIP-3009 authorization as x402's exact EVM payload carries it (numbers as decimal strings). */
export interface SignedAuthorization {
  from: Hex;
  to: Hex;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

export interface DevnetTokenConfig {
  key: "usdc/devnet";
  chain: "31337";
  address: Hex;
  name: string;
  version: string;
  decimals: 6;
}

export interface Devnet {
  rpcUrl: string;
  chainId: 31337;
  network: "eip155:31337";
  token: { address: Hex; name: string; version: string; decimals: 6; abi: Abi };
  facilitatorUrl: string;
  /** Address that submits settlements and pays their gas. */
  facilitatorSigner: Hex;
  /** Holds `payerBalance` test tokens (default 1000) and no ETH. */
  payer: DevnetAccount;
  /** A fresh recipient with no tokens at start. */
  payTo: Hex;
  payToAccount: DevnetAccount;
  /** Holds no tokens. */
  unfunded: DevnetAccount;
  /** Token balance in smallest units (6 decimals). */
  balanceOf(address: Hex): Promise<bigint>;
  /** Mints `amount` smallest units to `address`. */
  fund(address: Hex, amount: bigint): Promise<void>;
  /**
   * Moves every token of the key's account away (to the token owner) with a real
   * transferWithAuthorization, so a payment verified earlier fails at settlement. Returns
   * the amount moved.
   */
  drain(privateKey: Hex): Promise<bigint>;
  /**
   * Consumes the key's EIP-3009 `nonce` without paying anyone it was meant for, as a payer racing
   * a settlement could: `cancel` with `cancelAuthorization`, or `transfer` 1 unit to the token owner
   * under another authorization with that nonce. Gas is paid by the token owner.
   */
  spendNonce(privateKey: Hex, nonce: Hex, how: "cancel" | "transfer"): Promise<void>;
  /** Submits a payer's signed authorization as anyone holding it could (gas paid by the token owner). */
  submitAuthorization(authorization: SignedAuthorization, signature: Hex): Promise<Hex>;
  tokenConfig(): DevnetTokenConfig;
  stop(): Promise<void>;
}

export interface DevnetOptions {
  /** Fixed chain RPC port (default: any free port). */
  rpcPort?: number;
  /** Fixed facilitator port (default: any free port). */
  facilitatorPort?: number;
  /** EIP-712 domain name of the test token. */
  tokenName?: string;
  /** Initial payer balance in smallest units (default 1000 tokens). */
  payerBalance?: bigint;
  /** One line per facilitator verify/settle. */
  log?: (line: string) => void;
}

/** anvil's default dev accounts 0 and 1 ("test test … junk" mnemonic); public knowledge. */
const DEPLOYER_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const FACILITATOR_KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
/** Canonical Multicall3 address on public chains; the facilitator's diagnostics call it. */
const MULTICALL3_ADDRESS: Hex = "0xcA11bde05977b3631167028862bE2a173976CA11";

export const DEVNET_TOKEN_NAME = "Test USD Coin";
export const DEVNET_TOKEN_VERSION = "2";

export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const contracts = await compileSandboxContracts();
  const chain = await startChain({ port: options.rpcPort });
  try {
    const publicClient = createPublicClient({ chain: anvil, transport: http(chain.rpcUrl), pollingInterval: 100 });
    const owner = createWalletClient({
      account: privateKeyToAccount(DEPLOYER_KEY, { nonceManager: freshNonceManager() }),
      chain: anvil,
      transport: http(chain.rpcUrl),
      pollingInterval: 100,
    });

    await publicClient.request({
      method: "anvil_setCode" as never,
      params: [MULTICALL3_ADDRESS, contracts.Multicall3.deployedBytecode] as never,
    });

    const tokenName = options.tokenName ?? DEVNET_TOKEN_NAME;
    const abi = contracts.TestUSDC.abi;
    const deployHash = await owner.deployContract({ abi, bytecode: contracts.TestUSDC.bytecode, args: [tokenName] });
    const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash });
    if (!deployed.contractAddress) throw new Error("TestUSDC deployment produced no contract address");
    const tokenAddress = getAddress(deployed.contractAddress);

    const payer = derivedAccount("arrow402 devnet payer");
    const payToAccount = derivedAccount("arrow402 devnet pay_to");
    const unfunded = derivedAccount("arrow402 devnet unfunded");

    const mined = async (hash: Hex): Promise<void> => {
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`devnet transaction ${hash} reverted`);
    };
    const balanceOf = (address: Hex) =>
      publicClient.readContract({ address: tokenAddress, abi, functionName: "balanceOf", args: [address] }) as Promise<bigint>;
    const fund = async (address: Hex, amount: bigint) =>
      mined(await owner.writeContract({ address: tokenAddress, abi, functionName: "mint", args: [address, amount] }));
    const drain = async (privateKey: Hex): Promise<bigint> => {
      const from = privateKeyToAccount(privateKey);
      const amount = await balanceOf(from.address);
      if (amount === 0n) return 0n;
      const auth = await authorizeTransfer(from, {
        token: { address: tokenAddress, name: tokenName, version: DEVNET_TOKEN_VERSION, chainId: DEVNET_CHAIN_ID },
        to: owner.account.address,
        value: amount,
      });
      await mined(await owner.writeContract({ address: tokenAddress, abi, functionName: "transferWithAuthorization", args: auth }));
      return amount;
    };

    const spendNonce = async (privateKey: Hex, nonce: Hex, how: "cancel" | "transfer"): Promise<void> => {
      const from = privateKeyToAccount(privateKey);
      const token = { address: tokenAddress, name: tokenName, version: DEVNET_TOKEN_VERSION, chainId: DEVNET_CHAIN_ID };
      if (how === "transfer") {
        const auth = await authorizeTransfer(from, { token, to: owner.account.address, value: 1n, nonce });
        await mined(await owner.writeContract({ address: tokenAddress, abi, functionName: "transferWithAuthorization", args: auth }));
        return;
      }
      const signature = await from.signTypedData({
        domain: { name: token.name, version: token.version, chainId: token.chainId, verifyingContract: token.address },
        types: { CancelAuthorization: [{ name: "authorizer", type: "address" }, { name: "nonce", type: "bytes32" }] },
        primaryType: "CancelAuthorization",
        message: { authorizer: from.address, nonce },
      });
      const { r, s, v } = parseSignature(signature);
      await mined(await owner.writeContract({ address: tokenAddress, abi, functionName: "cancelAuthorization", args: [from.address, nonce, Number(v), r, s] }));
    };

    const submitAuthorization = async (a: SignedAuthorization, signature: Hex): Promise<Hex> => {
      const args = [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature] as const;
      const hash = await owner.writeContract({ address: tokenAddress, abi, functionName: "transferWithAuthorization", args });
      await mined(hash);
      return hash;
    };

    await fund(payer.address, options.payerBalance ?? 1000n * 10n ** 6n);

    const facilitator = startFacilitatorServer({
      rpcUrl: chain.rpcUrl,
      signerPrivateKey: FACILITATOR_KEY,
      port: options.facilitatorPort,
      log: options.log,
    });

    const token = { address: tokenAddress, name: tokenName, version: DEVNET_TOKEN_VERSION, decimals: 6 as const, abi };
    return {
      rpcUrl: chain.rpcUrl,
      chainId: DEVNET_CHAIN_ID,
      network: DEVNET_NETWORK,
      token,
      facilitatorUrl: facilitator.url,
      facilitatorSigner: facilitator.signerAddress,
      payer,
      payTo: payToAccount.address,
      payToAccount,
      unfunded,
      balanceOf,
      fund,
      drain,
      spendNonce,
      submitAuthorization,
      tokenConfig: () => ({
        key: "usdc/devnet",
        chain: "31337",
        address: token.address,
        name: token.name,
        version: token.version,
        decimals: 6,
      }),
      stop: async () => {
        await facilitator.stop();
        await chain.stop();
      },
    };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}

function derivedAccount(label: string): DevnetAccount {
  const privateKey = keccak256(toHex(label));
  return { privateKey, address: privateKeyToAccount(privateKey).address };
}
