/** `GET /api/table/{name}`: schema and price tags (spec "Table payment offers"; DESIGN.md §3). */
import { arrowTypeFor } from "../arrow/types.ts";
import type { TableInfo } from "../db/catalog.ts";
import { priceTagView, requiresPayment } from "./pricing-view.ts";

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
