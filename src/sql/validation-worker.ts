/**
 * A validation worker: parses and validates query text off the HTTP thread (ARCHITECTURE.md §4
 * "Validation is bounded"). sql-parser-cst cannot be interrupted, so a validation that overruns its
 * deadline is stopped by the HTTP thread terminating this worker (validator.ts).
 */
import { BadRequestError } from "../errors.ts";
import type { Catalog } from "../catalog.ts";
import { validateStatement } from "./dialect.ts";
import { parseSelect } from "./parse.ts";
import { shapeCatalog, toPlain, type FromValidator, type ToValidator } from "./plain-query.ts";

declare const self: Worker;

let catalog: Catalog = shapeCatalog([]);
let maxQueryBytes = 0;

const send = (message: FromValidator) => self.postMessage(message);

self.onmessage = (event: MessageEvent<ToValidator>) => {
  const message = event.data;
  if (message.type === "init") {
    catalog = shapeCatalog(message.tables);
    maxQueryBytes = message.maxQueryBytes;
    send({ type: "ready" });
    return;
  }
  try {
    const statement = parseSelect(message.sql, maxQueryBytes);
    const query = validateStatement(statement, message.sql, catalog);
    send({ type: "valid", id: message.id, query: toPlain(query, catalog), statement });
  } catch (error) {
    const refused = error instanceof BadRequestError;
    send({ type: "invalid", id: message.id, refused, message: error instanceof Error ? error.message : String(error) });
  }
};
