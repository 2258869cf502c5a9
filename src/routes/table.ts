/**
 * `GET /api/table/{name}`: schema and price tags (spec "Table payment offers"; DESIGN.md §3),
 * through the payment core when the table has a metadata price (DESIGN.md §6).
 */
import { arrowTypeFor } from "../arrow/types.ts";
import type { Config } from "../config/types.ts";
import type { Catalog, TableInfo } from "../db/catalog.ts";
import { BadRequestError, TableNotFoundError } from "../errors.ts";
import type { PaymentCore } from "../payment/core.ts";
import { PAYMENT_SIGNATURE, decodePaymentSignature } from "../payment/wire.ts";
import { priceTagView, requiresPayment } from "./pricing-view.ts";
import { paymentRequiredResponse, paymentResponseHeaders } from "./x402-headers.ts";

export interface TableDeps {
  config: Config;
  catalog: Catalog;
  payments: PaymentCore;
}

/** `name` is null when the path segment is not valid percent-encoding. */
export async function handleTable(deps: TableDeps, name: string | null, request: Request): Promise<Response> {
  if (name === null || name === undefined) {
    throw new BadRequestError("The table name in the path is not valid percent-encoding: encode it with encodeURIComponent");
  }
  const table = deps.catalog.table(name);
  if (!table) throw new TableNotFoundError(name);
  const tags = table.config.priceTags.filter((tag) => tag.type === "metadata_price");
  if (tags.length === 0) return Response.json(tableDocument(table));
  const url = new URL(request.url);
  const header = request.headers.get(PAYMENT_SIGNATURE);
  const outcome = await deps.payments.process({
    tags,
    tableName: table.name,
    query: null,
    resource: {
      url: deps.config.server.baseUrl + url.pathname + url.search,
      description: tags[0]?.description ?? `Metadata of table '${table.name}'`,
      mimeType: "application/json",
    },
    payload: header === null ? null : decodePaymentSignature(header),
    signal: request.signal,
    execute: async () => null,
  });
  if (outcome.kind === "payment-required") return paymentRequiredResponse(outcome.body, outcome.settlement);
  return Response.json(tableDocument(table), { headers: paymentResponseHeaders(outcome.kind === "paid" ? outcome.receipt : null) });
}

export function tableDocument(table: TableInfo) {
  return {
    table_name: table.name,
    price_tags: table.config.priceTags.map(priceTagView),
    requires_payment: requiresPayment(table.config.priceTags),
    description: table.config.description,
    schema: {
      fields: table.columns.map((column) => ({
        name: column.name,
        // Exactly the Arrow type the query endpoint returns for this column.
        data_type: arrowTypeFor(column.kind).toString(),
        nullable: column.nullable,
        metadata: {
          ...(column.description ? { description: column.description } : {}),
          ...(column.declaredType ? { sqlite_type: column.declaredType } : {}),
        },
      })),
      metadata: {},
    },
  };
}
