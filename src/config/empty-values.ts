/**
 * A YAML key with nothing after it (`price_tags:`) is null. For a key the schema knows, that reads
 * as "not given": the key is dropped before validation, so an emptied optional section takes its
 * default and an emptied required key is reported as missing. A key the schema does not know is
 * kept, null or not, so it is still reported as unknown: in a flow mapping such as
 * `{ description: Any query, flat }` the comma makes `flat` a key of its own.
 */
import type { TSchema } from "typebox";
import { isRecord } from "./problems.ts";

export function dropEmptyValues(schema: TSchema, value: unknown): unknown {
  const node = schema as Record<string, unknown>;
  if (Array.isArray(value)) {
    const items = node.items;
    return isRecord(items) ? value.map((item) => dropEmptyValues(items as TSchema, item)) : value;
  }
  if (!isRecord(value)) return value;
  const properties = isRecord(node.properties) ? node.properties : undefined;
  const patternSchemas = isRecord(node.patternProperties) ? Object.values(node.patternProperties) : [];
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const known = properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : patternSchemas[0];
    if (item === null && properties !== undefined && Object.hasOwn(properties, key)) continue;
    // defineProperty: a YAML key named __proto__ must stay a plain key.
    Object.defineProperty(result, key, {
      value: isRecord(known) ? dropEmptyValues(known as TSchema, item) : item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}
