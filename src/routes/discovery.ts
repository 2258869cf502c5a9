/**
 * `GET /api/`: the discovery document (spec "Discovery document"). The facilitator's URL is shown
 * without credentials or query string, where a token to it may travel (config/public-url.ts).
 */
import { publicUrl } from "../config/public-url.ts";
import type { Config } from "../config/types.ts";
import type { Catalog } from "../engines/sqlite/catalog.ts";
import { ARROW_STREAM } from "../service/query-service.ts";
import { queriesArePaid } from "../payment/terms.ts";
import { summaryPricing } from "../service/pricing-view.ts";

export function discoveryDocument(config: Config, catalog: Catalog, version: string) {
  return {
    server: { url: config.server.baseUrl, version, facilitator_url: publicUrl(config.facilitator.url) },
    endpoints: {
      "GET /api/": { description: "This discovery document: the server, its endpoints and its tables." },
      "GET /api/table/{name}": {
        description: "Schema and price tags of one table (paid only if the table has a metadata price).",
        response_format: "application/json",
      },
      "GET /api/query": {
        description:
          "Run a Simplified SQL query (?query=SELECT ... FROM <table> ...); paid tables answer 402 with x402 V2 payment options.",
        response_format: ARROW_STREAM,
      },
      "POST /mcp": {
        description:
          "MCP (Streamable HTTP, stateless) for AI agents: tools list_tables, describe_table and query; paid tools follow the x402 V2 MCP transport " +
          `(payment in _meta["x402/payment"]); one query call returns at most ${Math.min(config.limits.mcpMaxRows, config.limits.maxRows)} rows.`,
        response_format: "application/json",
      },
    },
    tables: catalog.tables.map((table) => ({
      name: table.name,
      description: table.config.description,
      requires_payment: queriesArePaid(table.config.priceTags),
      details: `/api/table/${encodeURIComponent(table.name)}`,
      pricing: summaryPricing(table.config.priceTags),
    })),
  };
}
