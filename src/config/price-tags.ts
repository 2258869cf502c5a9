/**
 * A table's `price_tags:` (ARCHITECTURE.md §2): each entry is dispatched on `type` to its own closed
 * schema, then its meaning is checked: a known token, a checksummed `pay_to`, exact amounts with
 * no more decimals than the token has, `min_items <= max_items`, and at most one default offer.
 * When no per_row/fixed tag says `is_default: true`, the first of them is the default.
 */
import { tryParseDecimalAmount } from "./amounts.ts";
import { checkAddress } from "./addresses.ts";
import { dropEmptyValues } from "./empty-values.ts";
import type { ResolvedTokens } from "./custom-tokens.ts";
import { isRecord, formatPath, describeKind, type ConfigPath, type Problems } from "./problems.ts";
import { PRICE_TAG_SCHEMAS } from "./schema.ts";
import { collectSchemaProblems } from "./schema-problems.ts";
import type { Hex, PriceTag, TokenInfo } from "./types.ts";

const TYPES = Object.keys(PRICE_TAG_SCHEMAS).join(", ");

/** Amount fields that must be positive; a zero price would be an offer to pay nothing. */
const POSITIVE_AMOUNTS = new Set(["amount_per_item", "amount"]);

function tokenFor(key: unknown, path: ConfigPath, tokens: ResolvedTokens, problems: Problems): TokenInfo | undefined {
  if (typeof key !== "string" || key === "") return undefined;
  const token = tokens.tokens[key];
  if (token === undefined && !tokens.broken.has(key)) {
    problems.add(path, `unknown token ${JSON.stringify(key)}; use one of ${Object.keys(tokens.tokens).join(", ")} or define it under tokens:`);
  }
  return token;
}

function amountOf(tag: Record<string, unknown>, field: string, token: TokenInfo | undefined, path: ConfigPath, problems: Problems): bigint | undefined {
  const text = tag[field];
  if (typeof text !== "string" || token === undefined) return undefined;
  const parsed = tryParseDecimalAmount(text, token.decimals);
  if (!parsed.ok) {
    problems.add([...path, field], parsed.reason);
    return undefined;
  }
  if (parsed.units === 0n && POSITIVE_AMOUNTS.has(field)) {
    problems.add([...path, field], "must be more than 0; remove the price tag to make this free");
    return undefined;
  }
  return parsed.units;
}

/** Checks one entry; returns the resolved tag, or undefined when it has a problem. */
function resolveTag(entry: unknown, path: ConfigPath, tokens: ResolvedTokens, problems: Problems): PriceTag | undefined {
  const type = isRecord(entry) ? entry.type : undefined;
  const schema = typeof type === "string" ? PRICE_TAG_SCHEMAS[type] : undefined;
  const raw = schema === undefined ? entry : dropEmptyValues(schema, entry);
  if (!isRecord(raw)) {
    problems.add(path, `got ${describeKind(raw)}; write a mapping with a type (${TYPES}), pay_to, token and an amount`);
    return undefined;
  }
  if (type === undefined || type === null) {
    problems.add([...path, "type"], `is required; write one of ${TYPES}`);
  } else if (schema === undefined) {
    problems.add([...path, "type"], `must be one of ${TYPES}, got ${describeKind(type)}`);
  }
  const shapeOk = schema !== undefined && collectSchemaProblems(schema, raw, path, problems);
  const payTo = typeof raw.pay_to === "string" ? checkAddress(raw.pay_to, [...path, "pay_to"], problems, { allowZero: false }) : undefined;
  const token = tokenFor(raw.token, [...path, "token"], tokens, problems);
  const amounts = ["amount_per_item", "min_total_amount", "amount"].map((field) => amountOf(raw, field, token, path, problems));
  const [amountPerItem, minTotalAmount, amount] = amounts;
  const { min_items: minItems, max_items: maxItems } = raw;
  if (typeof minItems === "number" && typeof maxItems === "number" && minItems > maxItems) {
    problems.add([...path, "min_items"], `${minItems} is more than max_items ${maxItems}; make min_items at most max_items`);
    return undefined;
  }
  if (!shapeOk || payTo === undefined || token === undefined) return undefined;
  const common = { payTo: payTo as Hex, token, ...(typeof raw.description === "string" ? { description: raw.description } : {}) };
  const isDefault = raw.is_default === true;
  if (type === "per_row" && amountPerItem !== undefined && (raw.min_total_amount === undefined || minTotalAmount !== undefined)) {
    return {
      type,
      ...common,
      amountPerItem,
      ...(typeof minItems === "number" ? { minItems } : {}),
      ...(typeof maxItems === "number" ? { maxItems } : {}),
      ...(minTotalAmount !== undefined ? { minTotalAmount } : {}),
      quote: raw.quote === "limit" ? "limit" : "count",
      isDefault,
    };
  }
  if (type === "fixed" && amount !== undefined) return { type, ...common, amount, isDefault };
  if (type === "metadata_price" && amount !== undefined) return { type, ...common, amount };
  return undefined;
}

/** Resolves a table's tags; undefined entries in the input mean "free". */
export function resolvePriceTags(raw: unknown, tablePath: ConfigPath, tokens: ResolvedTokens, problems: Problems): PriceTag[] {
  if (!Array.isArray(raw)) return [];
  const tags = raw.map((entry, index) => resolveTag(entry, [...tablePath, "price_tags", index], tokens, problems));
  const resolved = tags.filter((tag): tag is PriceTag => tag !== undefined);
  const defaults = raw.flatMap((entry, index) => (isRecord(entry) && entry.is_default === true ? [index] : []));
  const [first, ...extra] = defaults;
  for (const index of extra) {
    problems.add(
      [...tablePath, "price_tags", index, "is_default"],
      `only one price tag per table may be the default, and ${formatPath([...tablePath, "price_tags", first ?? 0])} already is; remove is_default here`,
    );
  }
  if (first === undefined) {
    const firstQueryTag = resolved.find((tag) => tag.type === "per_row" || tag.type === "fixed");
    if (firstQueryTag !== undefined) firstQueryTag.isDefault = true;
  }
  return resolved;
}
