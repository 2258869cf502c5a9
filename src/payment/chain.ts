/**
 * Reads the token contract: before any facilitator call, whether a payer can pay at all (its
 * balance, and whether a smart wallet is deployed at it: `payerState`, used by payer-check.ts,
 * ARCHITECTURE.md §6 step 4); after a settlement whose answer was lost, whether it actually
 * happened (ARCHITECTURE.md §6 "Crashes"). Only `rpc_urls` endpoints are asked; nothing is ever sent.
 *
 * EIP-3009 `authorizationState(authorizer, nonce)` turns true when the nonce is consumed, which is
 * not proof of payment: `cancelAuthorization` consumes it too, and so does *another* authorization
 * the payer signs with the same nonce (to anyone, for any amount) and submits first. So a payment
 * counts as transferred only when the token's `AuthorizationUsed(authorizer, nonce)` log is followed,
 * in the same transaction, by its `Transfer(from, payTo, amount)` log: USDC (FiatToken v2) and the
 * devnet's token mark the authorization used and then transfer, in one call, emitting these two
 * logs one after the other.
 */
import { createPublicClient, decodeEventLog, erc20Abi, http, parseAbi, type Hex, type Log, type PublicClient } from "viem";
import { withDeadline } from "../deadline.ts";

export const EIP3009_ABI = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

/** Blocks searched back from the head for the transaction that used an authorization. */
export const LOG_LOOKBACK_BLOCKS = 10_000n;
/**
 * Blocks per log query, newest first: public RPC providers refuse `eth_getLogs` over wide ranges
 * (often 1,000 or 2,000 blocks), and the transaction looked for is usually among the latest.
 */
export const LOG_WINDOW_BLOCKS = 1_000n;

export interface AuthorizationRef {
  /** `eip155:<chain id>`. */
  network: string;
  asset: string;
  from: string;
  nonce: string;
}

/** An authorization and the transfer it pays. */
export interface PaymentRef extends AuthorizationRef {
  payTo: string;
  amount: bigint;
}

/** How a consumed nonce was consumed, from the token's logs in the blocks searched. */
export type NonceUse =
  /** By this payment: `amount` moved from `from` to `payTo` in `transaction`, mined at `minedAt` (its block's time). */
  | { kind: "transferred"; transaction: Hex; blockNumber: bigint; minedAt: Date }
  /** Cancelled, or used by another authorization with this nonce (in `transaction`): this payment moved nothing. */
  | { kind: "consumed"; cancelled: boolean; transaction: Hex | null }
  /**
   * Neither proven: no log names the nonce in the blocks searched (an older transaction), or its
   * transaction moved this amount to payTo but not right after marking the nonce used (a token that
   * logs in another order, or several authorizations in one transaction). Kept for the operator.
   */
  | { kind: "unproven"; transaction: Hex | null };

/** What the chain says of a payment: its nonce unused, or how it was used. */
export type PaymentState = { kind: "unused" } | NonceUse;

/** A payer to read before any facilitator call (payer-check.ts). */
export interface PayerRef {
  /** `eip155:<chain id>`. */
  network: string;
  asset: string;
  from: string;
  /** Whether to read the contract code at `from` too (a signature only a smart wallet can make). */
  code: boolean;
}

/** `balance`: the token's `balanceOf(from)`; `deployed`: code at `from` (null when not asked). */
export interface PayerState {
  balance: bigint;
  deployed: boolean | null;
}

/**
 * The most a payer read may take. It precedes /verify on the paid path, so it is short: past it
 * (or on any failure) the facilitator decides, as it would without the read.
 */
export const PAYER_READ_MS = 1_000;

export interface ChainReader {
  /** null: this chain has no RPC endpoint, or the endpoint did not answer. */
  paymentState(ref: PaymentRef): Promise<PaymentState | null>;
  /** null: this chain has no RPC endpoint, or the endpoint failed or took longer than its deadline (PAYER_READ_MS). */
  payerState(ref: PayerRef): Promise<PayerState | null>;
}

/**
 * `deadlineMs`: the most one `paymentState` may take, all its calls together; past it the state is
 * unknown (null), which never removes an attempt. The server passes `facilitator.timeout_ms`, so a
 * buyer whose /settle failed waits at most that long more for the answer. The payment's claim is
 * renewed while the read runs (store/leases.ts): no other request can take the payment meanwhile. `payerReadMs`:
 * the most one `payerState` may take.
 */
export function createChainReader(rpcUrls: Record<number, string>, deadlineMs = 10_000, timeoutMs = 5_000, payerReadMs = PAYER_READ_MS): ChainReader {
  const clientFor = rpcClients(rpcUrls, timeoutMs);
  // A payer read gets no retry: a second try would not fit its deadline.
  const payerClientFor = rpcClients(rpcUrls, payerReadMs, 0);
  return {
    async paymentState(ref) {
      const client = clientFor(chainIdOf(ref.network));
      if (client === null) return null;
      return withDeadline((expired) => readState(client, ref, expired), deadlineMs, () => null);
    },
    async payerState(ref) {
      const client = payerClientFor(chainIdOf(ref.network));
      if (client === null) return null;
      return withDeadline(() => readPayer(client, ref), payerReadMs, () => null);
    },
  };
}

/** The payer's balance (and code), both read at once: one round trip. null when the endpoint failed. */
async function readPayer(client: PublicClient, ref: PayerRef): Promise<PayerState | null> {
  try {
    const [balance, code] = await Promise.all([
      client.readContract({ address: ref.asset as Hex, abi: erc20Abi, functionName: "balanceOf", args: [ref.from as Hex] }),
      ref.code ? client.getCode({ address: ref.from as Hex }) : null,
    ]);
    return { balance, deployed: ref.code ? code !== undefined && code !== null && code !== "0x" : null };
  } catch {
    return null;
  }
}

/** The chain id of an `eip155:<id>` network. */
export function chainIdOf(network: string): number {
  return Number(network.replace(/^eip155:/, ""));
}

/** One viem client per chain with an `rpc_urls` endpoint, made on first use; null for a chain without one. */
export function rpcClients(rpcUrls: Record<number, string>, timeoutMs: number, retryCount = 1): (chainId: number) => PublicClient | null {
  const clients = new Map<number, PublicClient>();
  return (chainId) => {
    const url = rpcUrls[chainId];
    if (url === undefined) return null;
    let client = clients.get(chainId);
    if (client === undefined) {
      client = createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount }) });
      clients.set(chainId, client);
    }
    return client;
  };
}

/**
 * The payment's state read through `client`, or null when the endpoint failed. Once `expired` is
 * aborted nobody waits for the answer any more, and no further call is made.
 */
async function readState(client: PublicClient, ref: PaymentRef, expired?: AbortSignal): Promise<PaymentState | null> {
  try {
    // Not viem's cached head (kept for its polling interval, 4 s): a transfer mined since would be
    // read as unused at the older block.
    const head = await client.getBlockNumber({ cacheTime: 0 });
    expired?.throwIfAborted();
    const used = await client.readContract({
      address: ref.asset as Hex,
      abi: EIP3009_ABI,
      functionName: "authorizationState",
      args: [ref.from as Hex, ref.nonce as Hex],
      blockNumber: head,
    });
    if (!used) return { kind: "unused" };
    return await findNonceUse(client, ref, recentBlocks(head), expired);
  } catch {
    return null;
  }
}

/** Blocks to search for a nonce's logs, both ends included. */
export interface BlockRange {
  fromBlock: bigint;
  toBlock: bigint;
}

/** The LOG_LOOKBACK_BLOCKS blocks up to `head`. */
export function recentBlocks(head: bigint): BlockRange {
  return { fromBlock: head > LOG_LOOKBACK_BLOCKS ? head - LOG_LOOKBACK_BLOCKS : 0n, toBlock: head };
}

/**
 * How the (consumed) nonce of `ref` was used, from the token's logs in `range`, newest first.
 * Throws `expired`'s reason instead of starting another call once it is aborted.
 */
export async function findNonceUse(client: PublicClient, ref: PaymentRef, range: BlockRange, expired?: AbortSignal): Promise<NonceUse> {
  const args = { authorizer: ref.from as Hex, nonce: ref.nonce as Hex };
  // Both events are (authorizer indexed, nonce indexed): one typing serves both.
  const newest = async (event: (typeof EIP3009_ABI)[1 | 2]) => {
    for (let toBlock = range.toBlock; toBlock >= range.fromBlock; toBlock -= LOG_WINDOW_BLOCKS) {
      expired?.throwIfAborted();
      const fromBlock = toBlock - range.fromBlock + 1n > LOG_WINDOW_BLOCKS ? toBlock - LOG_WINDOW_BLOCKS + 1n : range.fromBlock;
      const [log] = await client.getLogs({ address: ref.asset as Hex, event: event as (typeof EIP3009_ABI)[1], args, fromBlock, toBlock });
      if (log !== undefined) return log;
      if (fromBlock === range.fromBlock) break;
    }
    return undefined;
  };
  const used = await newest(EIP3009_ABI[1]);
  if (used !== undefined && used.transactionHash !== null && used.blockNumber !== null && used.logIndex !== null) {
    expired?.throwIfAborted();
    const receipt = await client.getTransactionReceipt({ hash: used.transactionHash });
    const next = receipt.logs.find((log) => log.logIndex === used.logIndex! + 1);
    if (next !== undefined && paysRef(next, ref)) {
      expired?.throwIfAborted();
      const block = await client.getBlock({ blockNumber: used.blockNumber });
      return { kind: "transferred", transaction: used.transactionHash, blockNumber: used.blockNumber, minedAt: new Date(Number(block.timestamp) * 1000) };
    }
    // Positive evidence only: a transaction that moved this amount to payTo elsewhere is not proof of the opposite.
    if (receipt.logs.some((log) => paysRef(log, ref))) return { kind: "unproven", transaction: used.transactionHash };
    return { kind: "consumed", cancelled: false, transaction: used.transactionHash };
  }
  const canceled = await newest(EIP3009_ABI[2]);
  if (canceled !== undefined) return { kind: "consumed", cancelled: true, transaction: canceled.transactionHash };
  return { kind: "unproven", transaction: null };
}

/** Whether `log` is the token's Transfer of exactly the payment's amount from its payer to its payTo. */
function paysRef(log: Log, ref: PaymentRef): boolean {
  if (log.address.toLowerCase() !== ref.asset.toLowerCase()) return false;
  try {
    const { eventName, args } = decodeEventLog({ abi: EIP3009_ABI, data: log.data, topics: log.topics });
    if (eventName !== "Transfer") return false;
    return args.from.toLowerCase() === ref.from.toLowerCase() && args.to.toLowerCase() === ref.payTo.toLowerCase() && args.value === ref.amount;
  } catch {
    return false;
  }
}
