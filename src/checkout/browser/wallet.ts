/**
 * The buyer's wallet, as the browser offers it (ARCHITECTURE.md §15): EIP-6963 discovery (every
 * wallet extension announces itself), `window.ethereum` when none announces, and an x402 signer
 * over the EIP-1193 provider whose `signTypedData` is the wallet's `eth_signTypedData_v4`: the key
 * never leaves the wallet, and the wallet shows the buyer what they sign.
 */
import type { ClientEvmSigner } from "@x402/evm";
import { typedDataJson } from "./typed-data.ts";

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
}

export interface FoundWallet {
  name: string;
  provider: Eip1193Provider;
}

interface AnnounceDetail {
  info?: { uuid?: string; name?: string };
  provider?: Eip1193Provider;
}

const announced: { uuid: string; wallet: FoundWallet }[] = [];

/** Listens from the start, so that wallets announcing themselves before the first click are known. */
function listen(): void {
  window.addEventListener("eip6963:announceProvider", (event: Event) => {
    const detail = (event as CustomEvent<AnnounceDetail>).detail;
    if (!detail?.provider || typeof detail.provider.request !== "function") return;
    const uuid = detail.info?.uuid ?? String(announced.length);
    if (announced.some((entry) => entry.uuid === uuid)) return;
    announced.push({ uuid, wallet: { name: detail.info?.name || "your wallet", provider: detail.provider } });
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
}
listen();

/** The wallets in this browser: those that announced themselves (EIP-6963), else `window.ethereum`. */
export async function findWallets(waitMs = 150): Promise<FoundWallet[]> {
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  if (announced.length === 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  if (announced.length > 0) return announced.map((entry) => entry.wallet);
  const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  return injected && typeof injected.request === "function" ? [{ name: "your browser's wallet", provider: injected }] : [];
}

/** The EIP-1193 error code of a wallet's refusal (4001: the user said no), looking through wrapping errors. */
export function walletErrorCode(error: unknown): number | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "number") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Asks the wallet for the buyer's account (the wallet asks the buyer). */
export async function requestAccount(provider: Eip1193Provider): Promise<`0x${string}`> {
  const accounts = (await provider.request({ method: "eth_requestAccounts" })) as string[];
  const account = accounts?.[0];
  if (typeof account !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(account)) throw new Error("The wallet returned no account.");
  return account as `0x${string}`;
}

/** The account the wallet has selected now (null when it says none). */
export async function currentAccount(provider: Eip1193Provider): Promise<`0x${string}` | null> {
  const accounts = (await provider.request({ method: "eth_accounts" }).catch(() => [])) as unknown[];
  const account = accounts?.[0];
  return typeof account === "string" && /^0x[0-9a-fA-F]{40}$/.test(account) ? (account as `0x${string}`) : null;
}

/** Switches the wallet to `chainId` when it is on another chain. */
export async function ensureChain(provider: Eip1193Provider, chainId: number): Promise<void> {
  const current = Number.parseInt(String(await provider.request({ method: "eth_chainId" })), 16);
  if (current === chainId) return;
  await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${chainId.toString(16)}` }] });
  const now = Number.parseInt(String(await provider.request({ method: "eth_chainId" })), 16);
  if (now !== chainId) throw Object.assign(new Error(`The wallet stayed on chain ${now}.`), { code: 4901 });
}

/** An x402 client signer whose signatures come from the wallet (ClientEvmSigner of @x402/evm). */
export function walletSigner(provider: Eip1193Provider, address: `0x${string}`): ClientEvmSigner {
  return {
    address,
    async signTypedData(data) {
      const signature = await provider.request({ method: "eth_signTypedData_v4", params: [address, typedDataJson(data)] });
      if (typeof signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(signature)) throw new Error("The wallet returned no signature.");
      return signature as `0x${string}`;
    },
  };
}
