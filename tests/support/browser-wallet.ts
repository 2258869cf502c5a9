/**
 * A test wallet for the browser tests (ARCHITECTURE.md §15): an EIP-1193 provider injected into the
 * page before its scripts run (page.addInitScript), announced by EIP-6963 and set as
 * `window.ethereum`, whose every request goes out of the page (page.exposeFunction) to a viem
 * account here. The key never enters the page; `eth_signTypedData_v4` is signed by viem from the
 * JSON the page sends, as a wallet extension signs it. `refuse` makes the wallet answer a method
 * with EIP-1193's 4001 (the user said no), as a person pressing Reject does.
 */
import type { Page } from "playwright-core";
import type { Hex, TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface TestWallet {
  address: Hex;
  /** The chain the wallet is on; it starts elsewhere (mainnet), so that a checkout must switch it. */
  chainId: number;
  /** Methods answered with 4001. */
  refuse: Set<string>;
  /** Methods answered with another EIP-1193 error code (4902 for wallet_switchEthereumChain: an unknown chain). */
  failWith: Map<string, number>;
  /** Every method the page asked for, in order. */
  calls: string[];
  /** The typed data of every signature made, as the page sent it. */
  signed: { primaryType: string; domain: Record<string, unknown>; message: Record<string, unknown> }[];
}

type Reply = { result: unknown } | { error: { code: number; message: string } };

const TYPE_FIELDS = /^u?int\d*$/;

/** The JSON's decimal strings as bigints where the typed data declares integers (viem wants them so). */
function integersOf(types: Record<string, { name: string; type: string }[]>, type: string, value: Record<string, unknown>): Record<string, unknown> {
  const fields = types[type] ?? [];
  return Object.fromEntries(
    fields.map(({ name, type: fieldType }) => {
      const raw = value[name];
      if (TYPE_FIELDS.test(fieldType)) return [name, BigInt(raw as string | number)];
      if (types[fieldType] !== undefined) return [name, integersOf(types, fieldType, raw as Record<string, unknown>)];
      return [name, raw];
    }),
  );
}

async function answer(wallet: TestWallet, account: ReturnType<typeof privateKeyToAccount>, method: string, params: any): Promise<Reply> {
  wallet.calls.push(method);
  if (wallet.refuse.has(method)) return { error: { code: 4001, message: "User rejected the request." } };
  const code = wallet.failWith.get(method);
  if (code !== undefined) return { error: { code, message: `The test wallet fails ${method} with ${code}` } };
  switch (method) {
    case "eth_requestAccounts":
    case "eth_accounts":
      return { result: [account.address.toLowerCase()] };
    case "eth_chainId":
      return { result: `0x${wallet.chainId.toString(16)}` };
    case "wallet_switchEthereumChain":
      wallet.chainId = Number.parseInt(params[0].chainId, 16);
      return { result: null };
    case "eth_signTypedData_v4": {
      const [from, json] = params as [string, string];
      if (from.toLowerCase() !== account.address.toLowerCase()) return { error: { code: 4100, message: `not this wallet's account: ${from}` } };
      const typed = JSON.parse(json);
      const { EIP712Domain: _domain, ...types } = typed.types;
      wallet.signed.push({ primaryType: typed.primaryType, domain: typed.domain, message: typed.message });
      const definition = {
        domain: { ...typed.domain, ...(typed.domain.chainId === undefined ? {} : { chainId: Number(typed.domain.chainId) }) },
        types,
        primaryType: typed.primaryType,
        message: integersOf(types, typed.primaryType, typed.message),
      } as TypedDataDefinition;
      return { result: await account.signTypedData(definition) };
    }
    default:
      return { error: { code: 4200, message: `The test wallet does not support ${method}` } };
  }
}

let injected = 0;

/**
 * Injects the wallet of `privateKey` into every page of `page`'s context loaded from now on,
 * announced under `name` (EIP-6963) unless `announce` is false, as an older extension that only
 * sets `window.ethereum`; the first one injected into a page is also `window.ethereum`.
 */
export async function injectWallet(page: Page, privateKey: Hex, name = "Test Wallet", announce = true): Promise<TestWallet> {
  const account = privateKeyToAccount(privateKey);
  const wallet: TestWallet = { address: account.address, chainId: 1, refuse: new Set(), failWith: new Map(), calls: [], signed: [] };
  injected += 1;
  const binding = `__arrow402TestWallet${injected}`;
  await page.exposeFunction(binding, (method: string, params: string) => answer(wallet, account, method, JSON.parse(params)));
  await page.addInitScript(
    ({ binding, name, uuid, announces }) => {
      const call = (window as unknown as Record<string, (method: string, params: string) => Promise<Reply>>)[binding]!;
      const provider = {
        async request({ method, params }: { method: string; params?: unknown }) {
          const reply = await call(method, JSON.stringify(params ?? null));
          if ("error" in reply) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
          return reply.result;
        },
        on() {},
        removeListener() {},
      };
      const info = { uuid, name, icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E", rdns: `dev.arrow402.${uuid}` };
      const global = window as unknown as { ethereum?: unknown };
      global.ethereum ??= provider;
      if (!announces) return;
      const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
      window.addEventListener("eip6963:requestProvider", announce);
      announce();
    },
    { binding, name, uuid: `test-wallet-${injected}`, announces: announce },
  );
  return wallet;
}
