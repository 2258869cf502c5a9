/**
 * The MCP tools (ARCHITECTURE.md §12) as plain data: names, descriptions an agent can act on, and the
 * JSON Schemas of their arguments and results. The query tool's description carries the dialect
 * (from the same allow-list the validator uses), the row cap and how x402 payment works, since an
 * agent reads nothing else before it calls.
 *
 * No tool declares an `outputSchema`: the official SDK client validates `structuredContent` against
 * it even in `isError` results, so the x402 `PaymentRequired` that a paid call must put there
 * (x402 `specs/transports-v2/mcp.md`) would be rejected by the very clients agents use. The
 * descriptions say what `structuredContent` holds instead.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import Type from "typebox";
import { Compile } from "typebox/compile";
import type { Config } from "../config/types.ts";
import { BadRequestError } from "../errors.ts";
import { FUNCTIONS } from "../sql/allowlist.ts";
import { PAYMENT_META, PAYMENT_RESPONSE_META } from "./results.ts";

export const TOOL_NAMES = ["list_tables", "describe_table", "query"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

function paymentHowTo(what: string): string {
  return (
    `Payment (x402 V2): an unpaid call on ${what} returns isError with an x402 PaymentRequired in structuredContent ` +
    `(and as JSON text): x402Version, resource, accepts (offers: amount in the token's smallest units, asset, payTo, network). ` +
    `Sign one offer with an x402 client and call again with the same arguments and the PaymentPayload in ` +
    `params._meta["${PAYMENT_META}"]; the settlement receipt comes back in result._meta["${PAYMENT_RESPONSE_META}"]. ` +
    `Nothing is charged for a call that fails.`
  );
}

export function toolDefinitions(config: Config): Tool[] {
  const { mcpMaxRows, maxQueryBytes } = config.limits;
  const cap = Math.min(mcpMaxRows, config.limits.maxRows);
  return [
    {
      name: "list_tables",
      title: "List tables",
      description:
        "Lists the published tables: name, description, columns (name, Arrow type, description) and prices in token units " +
        "(e.g. '0.001 USDC per row on Base'). Free. Where a table sells its schema (a metadata price), its columns are " +
        "left out here and describe_table returns them once paid.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      annotations: { title: "List tables", ...READ_ONLY },
    },
    {
      name: "describe_table",
      title: "Describe a table",
      description:
        "One table's schema (fields with Arrow data_type, nullable, description, sqlite_type or source_type: the engine's declared type) and its price tags, " +
        "as GET /api/table/{name} returns them (amounts in the token's smallest units). Free unless the table has a " +
        `metadata price. ${paymentHowTo("a table with a metadata price")}`,
      inputSchema: {
        type: "object",
        properties: { name: { type: "string", minLength: 1, description: "The table's name, as list_tables gives it." } },
        required: ["name"],
        additionalProperties: false,
      },
      annotations: { title: "Describe a table", ...READ_ONLY },
    },
    {
      name: "query",
      title: "Query a table",
      description:
        "Runs one read-only Simplified SQL query on one table and returns its rows as JSON: columns [{name, type}], " +
        "rows (arrays in column order) and row_count. Values: int64 a number, or a string of its exact digits beyond ±(2^53 - 1) " +
        '(e.g. "9223372036854775807", which a JSON number would not hold exactly), so an int64 column may hold both; ' +
        "decimals a string of their exact digits at the column's scale; dates YYYY-MM-DD, timestamps ISO-8601 UTC, blobs base64. " +
        "Dialect: SELECT * | col [AS alias], ... FROM <table> [WHERE expr] [ORDER BY col|alias [ASC|DESC] [NULLS FIRST|LAST], ...] " +
        "[LIMIT n [OFFSET m]]. WHERE may use comparisons, AND/OR/NOT, + - * / % ||, BETWEEN, IN (literal list), LIKE, GLOB, " +
        `IS [NOT] NULL, CAST and the functions ${Object.keys(FUNCTIONS).join(", ")}. ` +
        "Not allowed: joins or several tables, subqueries, CTEs, UNION, DISTINCT, GROUP BY, HAVING, aggregates (count, sum, ...), " +
        `window functions, CASE, parameters, expressions in the select list. At most ${maxQueryBytes} bytes of SQL. ` +
        `One call returns at most ${cap} rows: a larger result is refused (never truncated) before anything is charged, ` +
        "with the HTTP URL that serves any size as Apache Arrow; add a WHERE condition or a LIMIT. " +
        `A table sold per query (a fixed price) needs a LIMIT of at most ${cap}. ` +
        `Paid tables are priced per returned row or per query (see list_tables); a payment pays for exactly this SQL text. ` +
        paymentHowTo("a paid table"),
      inputSchema: {
        type: "object",
        properties: {
          sql: {
            type: "string",
            minLength: 1,
            description: `One SELECT in the dialect above, e.g. SELECT * FROM <table> WHERE ... LIMIT 100 (at most ${maxQueryBytes} bytes).`,
          },
        },
        required: ["sql"],
        additionalProperties: false,
      },
      annotations: { title: "Query a table", ...READ_ONLY },
    },
  ];
}

const NoArguments = Compile(Type.Object({}, { additionalProperties: false }));
const NameArgument = Compile(Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }));
const SqlArgument = Compile(Type.Object({ sql: Type.String({ minLength: 1 }) }, { additionalProperties: false }));

const SHAPES = {
  list_tables: { check: NoArguments, shape: "no arguments" },
  describe_table: { check: NameArgument, shape: '{"name": "<table>"}' },
  query: { check: SqlArgument, shape: '{"sql": "SELECT ... FROM <table> ..."}' },
} as const;

/** The tool's arguments, checked; a BadRequestError saying what to send otherwise. */
export function toolArguments<T extends ToolName>(tool: T, args: unknown): T extends "list_tables" ? Record<string, never> : T extends "describe_table" ? { name: string } : { sql: string } {
  const { check, shape } = SHAPES[tool];
  const value = args ?? {};
  // No tool takes more than one argument: an object of many properties is refused without listing
  // an error for each of them (tens of thousands cost the HTTP thread ~0.1 s).
  const properties = typeof value === "object" && value !== null ? Object.keys(value).length : 0;
  if (properties > 1) throw new BadRequestError(`The ${tool} tool takes ${shape} (arguments has ${properties} properties): send the arguments its input schema describes.`);
  if (!check.Check(value)) {
    const problem = check.Errors(value)[0];
    const where = problem === undefined ? "" : ` (${problem.instancePath || "arguments"} ${problem.message})`;
    throw new BadRequestError(`The ${tool} tool takes ${shape}${where}: send the arguments its input schema describes.`);
  }
  return value as never;
}
