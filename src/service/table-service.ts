/**
 * The table service: one table's schema and price tags (spec "Table payment offers"; ARCHITECTURE.md §3),
 * for every transport. `GET /api/table/{name}` and the MCP `describe_table` tool are bindings over
 * it. When the table has a metadata price the document is sold through the payment core, exactly
 * like a query (ARCHITECTURE.md §6), with `resource.mimeType` `application/json`.
 */
import { arrowTypeFor } from "../arrow/types.ts";
import type { Config } from "../config/types.ts";
import type { Catalog, TableInfo } from "../engines/sqlite/catalog.ts";
import { TableNotFoundError } from "../errors.ts";
import type { PaymentCore, SettlementReceipt } from "../payment/core.ts";
import { metadataExtensions } from "../payment/extensions.ts";
import type { ExactPaymentPayload } from "../payment/payload.ts";
import type { VerifyBudget } from "../payment/work.ts";
import type { PaymentRequiredBody } from "../payment/pricing.ts";
import { queriesArePaid } from "../payment/terms.ts";
import { priceTagView } from "./pricing-view.ts";

export interface TableServiceDeps {
  config: Config;
  catalog: Catalog;
  payments: PaymentCore;
}

export interface TableRequest {
  name: string;
  /** The URL the payment is bound to: `base_url` + `/api/table/{name}` as the HTTP client sent it. */
  resourceUrl: string;
  payment: ExactPaymentPayload | null;
  signal?: AbortSignal;
  /** The client's allowance of refused payments (routes/refused-payments.ts). */
  verifyBudget?: VerifyBudget;
}

export type TableDocument = ReturnType<typeof tableDocument>;

export type TableAnswer =
  | { kind: "document"; document: TableDocument; receipt: SettlementReceipt | null }
  | { kind: "payment-required"; body: PaymentRequiredBody; settlement?: SettlementReceipt };

export interface TableService {
  describe(request: TableRequest): Promise<TableAnswer>;
}

export function createTableService(deps: TableServiceDeps): TableService {
  return {
    async describe(request) {
      const table = deps.catalog.table(request.name);
      if (!table) throw new TableNotFoundError(request.name);
      const tags = table.config.priceTags.filter((tag) => tag.type === "metadata_price");
      if (tags.length === 0) return { kind: "document", document: tableDocument(table), receipt: null };
      const outcome = await deps.payments.process({
        tags,
        tableName: table.name,
        query: null,
        resource: {
          url: request.resourceUrl,
          description: tags[0]?.description ?? `Metadata of table '${table.name}'`,
          mimeType: "application/json",
        },
        extensions: metadataExtensions(),
        payload: request.payment,
        signal: request.signal,
        verifyBudget: request.verifyBudget,
        execute: async () => ({ rows: null, answer: null }),
      });
      if (outcome.kind === "payment-required") return { kind: "payment-required", body: outcome.body, settlement: outcome.settlement };
      return { kind: "document", document: tableDocument(table), receipt: outcome.kind === "paid" ? outcome.receipt : null };
    },
  };
}

export function tableDocument(table: TableInfo) {
  return {
    table_name: table.name,
    price_tags: table.config.priceTags.map(priceTagView),
    requires_payment: queriesArePaid(table.config.priceTags),
    description: table.config.description,
    schema: {
      fields: table.columns.map((column) => ({
        name: column.name,
        // Exactly the Arrow type the query endpoint returns for this column.
        data_type: arrowTypeFor(column).toString(),
        nullable: column.nullable,
        metadata: {
          ...(column.description ? { description: column.description } : {}),
          // DESIGN.md §3, §14: the engine's own declared type.
          ...(column.declaredType ? { [(table.engine ?? "sqlite") === "sqlite" ? "sqlite_type" : "source_type"]: column.declaredType } : {}),
        },
      })),
      metadata: {},
    },
  };
}
