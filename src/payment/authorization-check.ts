/**
 * What the chain says about one settlement attempt, for `arrow402 payments --reconcile` (ARCHITECTURE.md
 * §6 "Crashes"). Unlike the payment core's ChainReader, which only needs the payment's state, reconcile
 * must also know *why* it cannot tell (no endpoint configured, or the endpoint failed) to say which
 * setting to change, and *when* the chain is (its latest block's timestamp): an unused EIP-3009
 * authorization can never be used once a block at or after its `validBefore` exists, because
 * `transferWithAuthorization` requires `block.timestamp < validBefore` and block times never go back.
 *
 * The state is read at that very block, so "unused at a block past validBefore" is one consistent
 * observation. Only `rpc_urls` endpoints are asked; nothing is ever sent.
 */
import type { Hex, PublicClient } from "viem";
import { chainIdOf, EIP3009_ABI, findNonceUse, rpcClients, type BlockRange, type PaymentRef } from "./chain.ts";
import { CLOCK_ALLOWANCE_SECONDS } from "./local-checks.ts";

export type AuthorizationCheck =
  /** `rpc_urls` has no endpoint for the attempt's chain. */
  | { kind: "no-rpc"; chainId: number }
  /** The endpoint did not answer, or answered an error. */
  | { kind: "rpc-failed"; chainId: number; endpoint: string; reason: string }
  /** Used on chain by this payment (chain.ts `findNonceUse`): `hash` moved its amount to its payTo, mined at `minedAt`. */
  | { kind: "used"; transaction: { hash: string; minedAt: Date } }
  /** The nonce was cancelled, or spent by another authorization, in `transaction`: this payment moved nothing. */
  | { kind: "consumed"; cancelled: boolean; transaction: string | null }
  /** Used, but the logs between the attempt and its validBefore prove neither (chain.ts `NonceUse`). */
  | { kind: "unproven"; transaction: string | null; range: BlockRange }
  /** Not used as of the latest block, whose timestamp (Unix seconds) is `chainTime`. */
  | { kind: "unused"; chainTime: bigint };

/** An attempt's authorization, and the time window its transfer can have been mined in. */
export interface AttemptRef extends PaymentRef {
  /** When the attempt began (the server's clock). */
  attemptedAt: Date;
  /** EIP-3009 validBefore (Unix seconds): no block at or after it can use the authorization. */
  validBefore: bigint;
}

export interface AuthorizationChecker {
  check(ref: AttemptRef): Promise<AuthorizationCheck>;
}

export function createAuthorizationChecker(rpcUrls: Record<number, string>, timeoutMs = 10_000): AuthorizationChecker {
  const clientFor = rpcClients(rpcUrls, timeoutMs);
  // A chain's genesis time never changes: read once per chain, for every bound of every attempt.
  const genesisTimes = new Map<number, bigint>();
  const genesisTimeOf = (chainId: number, client: PublicClient) => async () => {
    let time = genesisTimes.get(chainId);
    if (time === undefined) {
      time = await blockTime(client, 0n);
      genesisTimes.set(chainId, time);
    }
    return time;
  };
  return {
    async check(ref) {
      const chainId = chainIdOf(ref.network);
      const client = clientFor(chainId);
      if (client === null) return { kind: "no-rpc", chainId };
      const asset = ref.asset as Hex;
      const args = { authorizer: ref.from as Hex, nonce: ref.nonce as Hex };
      try {
        const head = await client.getBlock({ blockTag: "latest" });
        const used = await client.readContract({
          address: asset,
          abi: EIP3009_ABI,
          functionName: "authorizationState",
          args: [args.authorizer, args.nonce],
          blockNumber: head.number,
        });
        if (!used) return { kind: "unused", chainTime: head.timestamp };
        // The transfer can only be in a block mined after the attempt began (less the clocks'
        // allowance) and before validBefore: searching there finds it however long ago it was.
        const genesisTime = genesisTimeOf(chainId, client);
        const range: BlockRange = {
          fromBlock: await firstBlockAtOrAfter(client, BigInt(Math.floor(ref.attemptedAt.getTime() / 1000)) - BigInt(CLOCK_ALLOWANCE_SECONDS), head, genesisTime),
          toBlock: (await firstBlockAtOrAfter(client, ref.validBefore, head, genesisTime)) - 1n,
        };
        const use = range.fromBlock > range.toBlock ? ({ kind: "unproven", transaction: null } as const) : await findNonceUse(client, ref, range);
        if (use.kind === "consumed") return use;
        if (use.kind === "unproven") return { ...use, range };
        return { kind: "used", transaction: { hash: use.transaction, minedAt: use.minedAt } };
      } catch (error) {
        return { kind: "rpc-failed", chainId, endpoint: endpointName(rpcUrls[chainId]!), reason: shortReason(error) };
      }
    },
  };
}

/**
 * The number of the first block whose timestamp is at or after `seconds`; `head + 1` when there is
 * none. Blocks come at a nearly steady rate (Base: one every 2 s), so the search starts where the
 * genesis and head times place `seconds`, steps away from that guess by 1, 2, 4… blocks until the
 * answer is bracketed, then halves the bracket: 3 or 4 `getBlock` calls on a steady chain, where a
 * binary search from block 0 takes ~25 on Base. However wrong the guess (an uneven chain), it costs
 * at most about twice a binary search. `genesisTime` gives block 0's time (read when not given).
 */
export async function firstBlockAtOrAfter(
  client: PublicClient,
  seconds: bigint,
  head: { number: bigint; timestamp: bigint },
  genesisTime: () => Promise<bigint> = () => blockTime(client, 0n),
): Promise<bigint> {
  if (head.timestamp < seconds) return head.number + 1n;
  if (head.number === 0n) return 0n;
  const genesis = await genesisTime();
  if (genesis >= seconds) return 0n;
  // From here block 0 is before `seconds` and the head at or after it: neither is read again.
  const atOrAfter = async (block: bigint) => block >= head.number || (block > 0n && (await blockTime(client, block)) >= seconds);
  const clamp = (block: bigint) => (block < 0n ? 0n : block > head.number ? head.number : block);
  const guess = clamp(((seconds - genesis) * head.number + (head.timestamp - genesis) - 1n) / (head.timestamp - genesis));
  // The answer is in (low, high].
  let low: bigint;
  let high: bigint;
  if (await atOrAfter(guess)) {
    high = guess;
    for (let step = 1n; ; step *= 2n) {
      const probe = clamp(guess - step);
      if (!(await atOrAfter(probe))) {
        low = probe;
        break;
      }
      high = probe;
    }
  } else {
    low = guess;
    for (let step = 1n; ; step *= 2n) {
      const probe = clamp(guess + step);
      if (await atOrAfter(probe)) {
        high = probe;
        break;
      }
      low = probe;
    }
  }
  while (high - low > 1n) {
    const middle = (low + high) / 2n;
    if (await atOrAfter(middle)) high = middle;
    else low = middle;
  }
  return high;
}

/** The timestamp (Unix seconds) of block `number`. */
async function blockTime(client: PublicClient, number: bigint): Promise<bigint> {
  return (await client.getBlock({ blockNumber: number })).timestamp;
}

/**
 * The endpoint as it may be printed: its origin only. RPC providers put the API key in the path
 * (`https://base-mainnet.g.alchemy.com/v2/<key>`) as often as in the query string.
 */
function endpointName(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(not a URL)";
  }
}

/** viem's one-line summary of an RPC failure (its full message spans many lines and repeats the URL). */
function shortReason(error: unknown): string {
  const short = (error as { shortMessage?: unknown }).shortMessage;
  const text = typeof short === "string" ? short : error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0]!.trim().replace(/\.$/, "");
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}
