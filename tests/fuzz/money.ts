/**
 * The end-of-run money checks of the payment fuzzers (DESIGN.md §6, §8): the payer's balance on
 * chain moved by exactly the settlements the servers delivered data for; every settled ledger row
 * is one of those settlements, for the resource it was delivered for; an unconfirmed attempt exists
 * only where a facilitator failure was staged during /settle; and the facilitator only ever saw
 * well-formed payloads.
 */
import { Database } from "bun:sqlite";
import type { Hex } from "viem";
import type { FuzzEnvironment, FuzzServer } from "./environment.ts";
import type { Receipt } from "./oracle.ts";

export interface MoneyFacts {
  env: FuzzEnvironment;
  payer: Hex;
  /** The payer's balance before the run (smallest units). */
  before: bigint;
  /** Every receipt of a 200 (PAYMENT-RESPONSE or the MCP `_meta` receipt), with the server that sent it. */
  receipts: (Receipt & { server: string })[];
  /** Payment keys (network|asset|from|nonce, lower case) of cases that made /settle fail on purpose. */
  outageKeys: Set<string>;
  /**
   * Keys of payments that could pay, whose client gave up and whose every later attempt was refused
   * for another reason (a query run again past the time limit): settled with no 200 to show for it,
   * as DESIGN.md §6 allows once /settle was sent. Their transfers count as paid.
   */
  unanswered?: Set<string>;
  /** The case that sent a payment, by key, for the messages. */
  caseOf?: (key: string) => string | undefined;
  /** Accounts that must end with what they started with (e.g. an unfunded signer: 0). */
  untouched: { address: Hex; balance: bigint }[];
}

interface LedgerRow {
  status: string;
  payment_key: string;
  resource_url: string;
  tx_hash: string;
  payer: string;
}

function ledgerRows(server: FuzzServer): LedgerRow[] {
  const db = new Database(server.ledgerPath, { readonly: true });
  try {
    return db.query<LedgerRow, []>("SELECT status, payment_key, resource_url, tx_hash, payer FROM payments ORDER BY id").all();
  } finally {
    db.close();
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;

/** Why a payload sent to the facilitator is not a well-formed x402 V2 exact EVM payload, or null (DESIGN.md §8). */
function malformed(payload: any): string | null {
  const auth = payload?.payload?.authorization;
  if (payload?.x402Version !== 2) return "x402Version";
  if (typeof payload.payload?.signature !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(payload.payload.signature)) return "signature";
  if (!ADDRESS.test(auth?.from) || !ADDRESS.test(auth?.to)) return "addresses";
  if (![auth.value, auth.validAfter, auth.validBefore].every((v) => typeof v === "string" && UINT.test(v))) return "amounts or times";
  if (typeof auth.nonce !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) return "nonce";
  if (typeof payload.accepted?.amount !== "string" || !ADDRESS.test(payload.accepted?.payTo)) return "accepted";
  return null;
}

export async function checkMoney(facts: MoneyFacts): Promise<string[]> {
  const { env } = facts;
  const problems: string[] = [];
  const transactions = new Map<string, Set<string>>();
  for (const receipt of facts.receipts) {
    const resources = transactions.get(receipt.transaction) ?? new Set<string>();
    resources.add(`${receipt.server} ${receipt.resource}`);
    transactions.set(receipt.transaction, resources);
  }

  const rows = env.servers().flatMap((server) => ledgerRows(server).map((row) => ({ server, row })));
  const named = (key: string) => (facts.caseOf?.(key) === undefined ? key : `${key}, sent by ${facts.caseOf(key)}`);
  const unanswered = rows.filter(({ row }) => row.status === "settled" && !transactions.has(row.tx_hash) && facts.unanswered?.has(row.payment_key));
  const counted = new Set([...transactions.keys(), ...unanswered.map(({ row }) => row.tx_hash)]);

  let paid = 0n;
  for (const transaction of counted) {
    try {
      for (const transfer of await env.sandbox.transfersIn(transaction as Hex)) {
        if (transfer.from.toLowerCase() === facts.payer.toLowerCase()) paid += transfer.value;
        else problems.push(`settlement ${transaction} moved money from ${transfer.from}, not from the fuzzer's payer`);
      }
    } catch (error) {
      problems.push(`a delivered settlement ${transaction} is not a mined transfer: ${String(error)}`);
    }
  }
  const after = await env.sandbox.devnet.balanceOf(facts.payer);
  if (facts.before - after !== paid) {
    problems.push(`the payer's balance went from ${facts.before} to ${after} (−${facts.before - after}), but the settlements delivered (or left unanswered after the client gave up) are worth ${paid}`);
  }
  for (const account of facts.untouched) {
    const now = await env.sandbox.devnet.balanceOf(account.address);
    if (now !== account.balance) problems.push(`${account.address} holds ${now}, not the ${account.balance} it started with`);
  }

  const settled = new Set<string>();
  for (const { server, row } of rows) {
    if (row.status === "settled") {
      settled.add(row.tx_hash);
      if (!counted.has(row.tx_hash)) problems.push(`the ${server.name} ledger holds settled payment ${row.tx_hash} (${row.resource_url}; ${named(row.payment_key)}) that no 200 delivered`);
    } else if (!facts.outageKeys.has(row.payment_key)) {
      problems.push(`the ${server.name} ledger holds an unconfirmed attempt (${row.resource_url}; ${named(row.payment_key)}) where no settlement failure was staged`);
    }
  }
  for (const [transaction, resources] of transactions) {
    if (!settled.has(transaction)) problems.push(`a 200 delivered settlement ${transaction} (${[...resources].join(", ")}) that no ledger records`);
  }

  for (const request of env.sandbox.proxy.requests) {
    if (request.endpoint !== "verify" && request.endpoint !== "settle") continue;
    const why = malformed((request.body as any)?.paymentPayload);
    if (why !== null) problems.push(`the facilitator was sent a malformed payload at /${request.endpoint} (${why}): ${JSON.stringify(request.body).slice(0, 300)}`);
  }
  return problems;
}
