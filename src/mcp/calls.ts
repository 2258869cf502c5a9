/**
 * What each MCP tool does (ARCHITECTURE.md §12), over the same services as the HTTP routes: `query` is
 * the query service (the same dialect, limits, prices, payment flow, ledger and replay rules as
 * `GET /api/query`), `describe_table` the table service (`GET /api/table/{name}`). The payment is
 * bound to the same resource URL as over HTTP: a query's is the canonical HTTP URL of the same SQL
 * (service/resource-url.ts), so a payment quoted for one query is refused for another, over either
 * transport, and one paid over MCP is served again over HTTP.
 */
import { arrowTypeFor } from "../arrow/types.ts";
import type { Config } from "../config/types.ts";
import { describeTablePrices } from "../dashboards/prices.ts";
import type { Catalog, TableInfo } from "../engines/sqlite/catalog.ts";
import { parsePaymentPayload, type ExactPaymentPayload } from "../payment/payload.ts";
import type { VerifyBudget } from "../payment/work.ts";
import { queriesArePaid } from "../payment/terms.ts";
import type { QueryService } from "../service/query-service.ts";
import { httpQueryUrl, httpTableUrl } from "../service/resource-url.ts";
import type { TableService } from "../service/table-service.ts";
import { PAYMENT_META, dataResult, paymentRequiredResult } from "./results.ts";
import { queryRows } from "./rows.ts";
import { toolArguments, type ToolName } from "./tools.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface ToolCallDeps {
  config: Config;
  catalog: Catalog;
  queries: QueryService;
  tables: TableService;
}

export interface ToolCall {
  tool: ToolName;
  arguments: unknown;
  /** `params._meta` of the request, where the payment travels. */
  meta: Record<string, unknown> | undefined;
  signal: AbortSignal;
  /** The client's allowance of refused payments (routes/refused-payments.ts). */
  verifyBudget?: VerifyBudget;
}

/** The place a malformed payment is named in messages. */
const PAYMENT_SOURCE = `MCP _meta["${PAYMENT_META}"]`;

/** The most rows one MCP query call may return: `limits.mcp_max_rows`, never above `max_rows`. */
export function mcpRowCap(config: Config): number {
  return Math.min(config.limits.mcpMaxRows, config.limits.maxRows);
}

export function createToolCalls(deps: ToolCallDeps) {
  const { config } = deps;
  const cap = mcpRowCap(config);
  const paymentOf = (meta: Record<string, unknown> | undefined): ExactPaymentPayload | null => {
    const value = meta?.[PAYMENT_META];
    return value === undefined || value === null ? null : parsePaymentPayload(value, PAYMENT_SOURCE);
  };

  const calls: Record<ToolName, (call: ToolCall) => Promise<CallToolResult>> = {
    async list_tables(call) {
      toolArguments("list_tables", call.arguments);
      return dataResult({ tables: deps.catalog.tables.map(tableSummary), query_row_limit: cap });
    },

    async describe_table(call) {
      const { name } = toolArguments("describe_table", call.arguments);
      const answer = await deps.tables.describe({
        name,
        resourceUrl: httpTableUrl(config.server.baseUrl, name),
        // Read only for a table that sells its metadata, as the HTTP route reads its header.
        get payment() {
          return paymentOf(call.meta);
        },
        signal: call.signal,
        verifyBudget: call.verifyBudget,
      });
      if (answer.kind === "payment-required") return paymentRequiredResult(answer.body, answer.settlement);
      return dataResult(answer.document, answer.receipt);
    },

    async query(call) {
      const { sql } = toolArguments("query", call.arguments);
      const resourceUrl = httpQueryUrl(config.server.baseUrl, sql);
      const answer = await deps.queries.run({
        sql,
        resourceUrl,
        // Read once the SQL is valid, as the HTTP route reads its header.
        get payment() {
          return paymentOf(call.meta);
        },
        signal: call.signal,
        verifyBudget: call.verifyBudget,
        answerCap: {
          max: cap,
          refusal: (rows) =>
            `The result has ${rows} rows, more than the ${cap} one MCP call may return (limits.mcp_max_rows); this call charged nothing. ` +
            `Add a WHERE condition or a LIMIT of at most ${cap}, or download the whole result as Apache Arrow over HTTP ` +
            `(paid the same way, with x402): GET ${resourceUrl}`,
          needsLimit:
            `This table is sold at a fixed price per query: over MCP, a query of it needs a LIMIT of at most ${cap} ` +
            `(limits.mcp_max_rows), so that its size does not depend on the data; this call charged nothing. ` +
            `Or download the whole result as Apache Arrow over HTTP (paid the same way, with x402): GET ${resourceUrl}`,
          maxBytes: config.limits.mcpMaxBytes,
          tooLarge:
            `The result is larger than the ${config.limits.mcpMaxBytes} bytes (as Apache Arrow) one MCP call may return (limits.mcp_max_bytes); this call charged nothing. ` +
            `Select fewer or narrower columns, add a WHERE condition or a smaller LIMIT, or download the whole result as Apache Arrow over HTTP ` +
            `(paid the same way, with x402): GET ${resourceUrl}`,
        },
      });
      if (answer.kind === "payment-required") return paymentRequiredResult(answer.body, answer.settlement);
      return dataResult({ ...(await queryRows(answer.result)) }, answer.receipt);
    },
  };

  return (call: ToolCall) => calls[call.tool](call);
}

/** A table for `list_tables`: where the schema is sold, its columns are not given away. */
function tableSummary(table: TableInfo) {
  const tags = table.config.priceTags;
  const schemaSold = tags.some((tag) => tag.type === "metadata_price");
  return {
    name: table.name,
    description: table.config.description,
    requires_payment: queriesArePaid(tags),
    prices: describeTablePrices(table.config),
    columns: schemaSold
      ? null
      : table.columns.map((column) => ({
          name: column.name,
          type: arrowTypeFor(column).toString(),
          nullable: column.nullable,
          ...(column.description ? { description: column.description } : {}),
        })),
    ...(schemaSold ? { columns_note: "This table sells its schema: describe_table returns the columns once paid." } : {}),
  };
}
