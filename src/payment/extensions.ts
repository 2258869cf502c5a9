/**
 * The x402 V2 extensions every 402 advertises (ARCHITECTURE.md §13), over HTTP and MCP alike:
 *
 * - `bazaar` (x402 `specs/extensions/bazaar.md`): how to call the paid resource and what it returns,
 *   as `info` plus the JSON Schema (draft 2020-12) that validates it, so that a facilitator that
 *   catalogs paid resources can list the tables. A query is described as the HTTP GET it is (its
 *   `resource.url` is the HTTP query URL on both transports): `queryParams.query` is this query's
 *   SQL, the output an Arrow stream whose schema is given as the example. Where the table's
 *   metadata is sold (a `metadata_price` tag) the schema is what is paid for, so no example names
 *   its columns.
 * - `payment-identifier` (x402 `specs/extensions/payment_identifier.md`): optional (`required:
 *   false`); a payload that carries an `id` is idempotent by it (payment/core.ts).
 *
 * Clients echo `extensions` into their payment payload (x402Client merges them), so over HTTP they
 * travel again inside PAYMENT-SIGNATURE: routes/header-budget.ts counts them.
 */
import { PAYMENT_IDENTIFIER } from "./payload.ts";

export type Extensions = Record<string, unknown>;

const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** One field of a result's Arrow schema, as `GET /api/table/{name}` writes it (ARCHITECTURE.md §3). */
export interface ExampleField {
  name: string;
  data_type: string;
  nullable: boolean;
}

export interface QueryDescription {
  sql: string;
  /** `limits.max_query_bytes`: the longest SQL accepted. */
  maxQueryBytes: number;
  /** The output format's name (arrow, csv, json, ndjson, parquet) and media type. */
  formatName: string;
  mediaType: string;
  /** The result's fields; null when the table's schema is sold (a metadata price). */
  fields: ExampleField[] | null;
}

/** The extensions of a query's 402. */
export function queryExtensions(query: QueryDescription): Extensions {
  return { bazaar: queryBazaar(query), [PAYMENT_IDENTIFIER]: paymentIdentifier() };
}

/** The extensions of the metadata endpoint's 402: a GET without parameters answering JSON. */
export function metadataExtensions(): Extensions {
  return { bazaar: metadataBazaar(), [PAYMENT_IDENTIFIER]: paymentIdentifier() };
}

/** `payment-identifier` as the x402 SDK declares it (`declarePaymentIdentifierExtension(false)`). */
export function paymentIdentifier() {
  return {
    info: { required: false },
    schema: {
      $schema: JSON_SCHEMA_2020_12,
      type: "object",
      properties: {
        required: { type: "boolean" },
        id: { type: "string", minLength: 16, maxLength: 128, pattern: "^[a-zA-Z0-9_-]+$" },
      },
      required: ["required"],
    },
  };
}

function queryBazaar(query: QueryDescription) {
  const output = {
    // bazaar.md "Output Types": `type` names the kind of response, `format` refines it.
    type: query.formatName,
    format: query.mediaType,
    ...(query.fields === null ? {} : { example: { schema: { fields: query.fields } } }),
  };
  const queryParam = {
    type: "string",
    minLength: 1,
    // Characters, a looser bound than the server's limit in UTF-8 bytes; never a tighter one.
    maxLength: query.maxQueryBytes,
    description:
      "Simplified SQL: SELECT columns FROM one table [WHERE ...] [ORDER BY ...] [LIMIT n [OFFSET m]]; " +
      `no joins, subqueries, aggregates or GROUP BY; at most ${query.maxQueryBytes} bytes.`,
  };
  return {
    info: { input: { type: "http", method: "GET", queryParams: { query: query.sql } }, output },
    schema: bazaarSchema(
      { type: "object", properties: { query: queryParam }, required: ["query"], additionalProperties: false },
      query.fields !== null,
    ),
  };
}

function metadataBazaar() {
  return {
    info: { input: { type: "http", method: "GET" }, output: { type: "json", format: "application/json" } },
    schema: bazaarSchema(null, false),
  };
}

/** The JSON Schema of `info`: an HTTP GET input (with its query parameters' schema) and the output. */
function bazaarSchema(queryParams: object | null, withExample: boolean) {
  return {
    $schema: JSON_SCHEMA_2020_12,
    type: "object",
    properties: {
      input: {
        type: "object",
        properties: {
          type: { type: "string", const: "http" },
          method: { type: "string", enum: ["GET"] },
          ...(queryParams === null ? {} : { queryParams }),
        },
        required: queryParams === null ? ["type", "method"] : ["type", "method", "queryParams"],
        additionalProperties: false,
      },
      output: {
        type: "object",
        properties: {
          type: { type: "string" },
          format: { type: "string" },
          ...(withExample ? { example: { type: "object" } } : {}),
        },
        required: ["type"],
      },
    },
    required: ["input"],
  };
}
