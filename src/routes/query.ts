/**
 * `GET /api/query` (spec "GET /api/query"; flow of DESIGN.md §6). The SQL is validated before
 * any payment logic; free tables stream at once; paid tables go through the payment gate, and
 * nothing is delivered before settlement and nothing is charged for a failure.
 */
import type { Config } from "../config/types.ts";
import type { QueryExecutor } from "../db/execute.ts";
import { BadRequestError } from "../errors.ts";
import type { PaymentGate } from "../payment/gate.ts";
import type { QueryValidator } from "../sql/validator.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";
import { requirementFor } from "../payment/pricing.ts";
import { ARROW_STREAM, arrowResponse } from "./arrow-response.ts";
import { checkPaidRetryFits } from "./header-budget.ts";
import { runPaid } from "./paid.ts";

/** Longer than any amount a quote can carry (uint256 stays within 78 digits; prices stay far below 10^30). */
const LARGEST_AMOUNT = 10n ** 30n;

export interface QueryDeps {
  config: Config;
  /** validateQuery over the catalog, off the HTTP thread, with repeated texts served from a cache. */
  validate: QueryValidator["validate"];
  executor: QueryExecutor;
  gate: PaymentGate;
}

export async function handleQuery(deps: QueryDeps, url: URL, paymentSignature: string | null, signal?: AbortSignal): Promise<Response> {
  const sql = readQueryParameter(url);
  const query = await deps.validate(sql);
  const tags = query.table.config.priceTags.filter((tag) => tag.type !== "metadata_price");
  if (tags.length === 0) {
    return arrowResponse(await deps.executor.stream(query));
  }
  const resource = {
    url: deps.config.server.baseUrl + url.pathname + url.search,
    description: deps.config.payment.defaultDescription,
    mimeType: ARROW_STREAM,
  };
  // A request that already carries a payment fitted; an unpaid one is quoted only if its paid retry will.
  if (paymentSignature === null) {
    const offers = tags.map((tag) => requirementFor(tag, LARGEST_AMOUNT, { maxTimeoutSeconds: deps.config.payment.maxTimeoutSeconds }));
    checkPaidRetryFits(url.pathname + url.search, resource, offers);
  }
  // Paid: the result is kept until settlement succeeds, so data never leaves unpaid.
  let buffered: Awaited<ReturnType<QueryExecutor["collect"]>> | null = null;
  return runPaid(deps.gate, {
    tags,
    tableName: query.table.name,
    query: sql,
    resource,
    paymentSignature,
    signal,
    countRows: () => countWithinLimit(deps, query),
    runQueryEarly: deps.executor.isSmall(query),
    runQuery: async () => {
      buffered = await deps.executor.collect(query);
      return { rows: buffered.rows };
    },
    deliver: async () => {
      buffered ??= await deps.executor.collect(query);
      return { response: (headers) => arrowResponse({ complete: buffered!.chunks, rows: buffered!.rows }, headers), rows: buffered.rows };
    },
  });
}

/**
 * The row count for the per_row quote. A result over `max_rows` would be refused once paid for
 * (DESIGN.md §2 `limits`), so it is refused now with the same 400 instead of quoted in a 402.
 */
async function countWithinLimit(deps: QueryDeps, query: ValidatedQuery): Promise<number> {
  const rows = await deps.executor.count(query);
  const max = deps.config.limits.maxRows;
  if (rows > max) {
    throw new BadRequestError(`The result has ${rows} rows, more than the limit of ${max}: add a WHERE condition or a LIMIT of at most ${max}`);
  }
  return rows;
}

function readQueryParameter(url: URL): string {
  const values = url.searchParams.getAll("query");
  if (values.length === 0 || values[0]!.trim() === "") {
    throw new BadRequestError("Missing 'query' parameter: send the SQL as ?query=SELECT ... (URL-encoded)");
  }
  if (values.length > 1) throw new BadRequestError("Send exactly one 'query' parameter");
  return values[0]!;
}
