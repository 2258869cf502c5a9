/**
 * The server's self-description (spec "Resources", ARCHITECTURE.md §3): `GET /api/` and
 * `GET /api/table/{name}`, checked by shape because they come from the network. A table whose
 * metadata is paid answers 402; that is an outcome, not a failure.
 */
import Type, { type Static } from "typebox";
import { Compile } from "typebox/compile";
import type { PaymentRequired } from "@x402/core/types";
import { errorText, send, type SendOptions } from "./http.ts";
import { readPaymentRequired } from "./payment-required.ts";
import { endpoints } from "./server-url.ts";

const Str = Type.String();
const OptionalText = Type.Optional(Type.Union([Type.String(), Type.Null()]));

const SummaryPricing = Type.Object({
  model: Str,
  amount_per_item: Type.Optional(Str),
  amount: Type.Optional(Str),
  token_address: Str,
  chain: Str,
  pay_to: Str,
});

const Discovery = Type.Object({
  server: Type.Object({ url: Str, version: Str, facilitator_url: Type.Optional(Str) }),
  tables: Type.Array(
    Type.Object({
      name: Str,
      description: Type.Optional(Str),
      requires_payment: Type.Boolean(),
      details: Type.Optional(Str),
      pricing: Type.Array(SummaryPricing),
    }),
  ),
});

const PriceTagDoc = Type.Object({
  pay_to: Str,
  pricing: Type.Object({
    model: Str,
    amount_per_item: OptionalText,
    amount: OptionalText,
    min_items: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    max_items: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    min_total_amount: OptionalText,
  }),
  token: Type.Object({ chain: Str, address: Str, decimals: Type.Integer({ minimum: 0, maximum: 77 }), transfer_method: Type.Optional(Str), symbol: Type.Optional(Str) }),
  is_default: Type.Optional(Type.Boolean()),
});

const TableDoc = Type.Object({
  table_name: Str,
  description: Type.Optional(Str),
  requires_payment: Type.Boolean(),
  price_tags: Type.Array(PriceTagDoc),
  schema: Type.Object({
    fields: Type.Array(
      Type.Object({
        name: Str,
        data_type: Str,
        nullable: Type.Optional(Type.Boolean()),
        metadata: Type.Optional(Type.Record(Str, Type.Unknown())),
      }),
    ),
  }),
});

export type DiscoveryDoc = Static<typeof Discovery>;
export type TableSummary = DiscoveryDoc["tables"][number];
export type SummaryPricingDoc = Static<typeof SummaryPricing>;
export type TableDocument = Static<typeof TableDoc>;
export type PriceTagDocument = Static<typeof PriceTagDoc>;

/** Documents are read under their own bound (DESIGN §17): thousands of tables fit in a few MB. */
const DOCUMENT: SendOptions = { timeoutMs: 30_000, maxBytes: 16 * 1024 ** 2, overBoundAdvice: "more than an arrow402 document needs" };

const checkDiscovery = Compile(Discovery);
const checkTable = Compile(TableDoc);

export type DiscoveryFetch = { ok: true; doc: DiscoveryDoc } | { ok: false; reason: string; status: number | null };

export async function fetchDiscovery(base: string): Promise<DiscoveryFetch> {
  const url = endpoints.discovery(base);
  const sent = await send(url, DOCUMENT);
  if (!sent.ok) return { ok: false, reason: sent.reason, status: null };
  const { answer } = sent;
  if (answer.status !== 200) return { ok: false, reason: `GET ${url} answered ${answer.status}: ${errorText(answer)}`, status: answer.status };
  const doc = parseJson(answer.body);
  if (!checkDiscovery.Check(doc)) return { ok: false, reason: `${url} is not an arrow402 discovery document`, status: 200 };
  return { ok: true, doc };
}

export type TableFetch =
  | { kind: "doc"; doc: TableDocument }
  | { kind: "paid"; required: PaymentRequired }
  | { kind: "failed"; reason: string };

export async function fetchTable(base: string, name: string): Promise<TableFetch> {
  const url = endpoints.table(base, name);
  const sent = await send(url, DOCUMENT);
  if (!sent.ok) return { kind: "failed", reason: sent.reason };
  const { answer } = sent;
  if (answer.status === 402) {
    const read = readPaymentRequired(answer.headers, answer.body);
    return read.ok ? { kind: "paid", required: read.required } : { kind: "failed", reason: read.reason };
  }
  if (answer.status !== 200) return { kind: "failed", reason: `GET ${url} answered ${answer.status}: ${errorText(answer)}` };
  const doc = parseJson(answer.body);
  if (!checkTable.Check(doc)) return { kind: "failed", reason: `${url} is not an arrow402 table document` };
  return { kind: "doc", doc };
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    return null;
  }
}
