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

/**
 * Parsed once before the worker reports ready. A fresh worker's first parse compiles the parser's
 * code as it goes (55 ms for a one-line query on a quiet machine, 160–340 ms on a loaded one,
 * against 1–15 ms for the next ones): without this, the first text a new or replacing worker gets
 * pays for that under its deadline. It goes through the clauses and operators texts commonly use.
 */
const WARM_UP =
  "SELECT a, b AS c FROM t WHERE a = 1 AND (b LIKE 'x%' OR c IN (1, 2)) AND lower(d) <> 'y' AND e IS NOT NULL " +
  "ORDER BY a DESC NULLS LAST, c LIMIT 10 OFFSET 2";

const send = (message: FromValidator) => self.postMessage(message);

self.onmessage = (event: MessageEvent<ToValidator>) => {
  const message = event.data;
  if (message.type === "init") {
    catalog = shapeCatalog(message.tables);
    maxQueryBytes = message.maxQueryBytes;
    try {
      parseSelect(WARM_UP, Number.MAX_SAFE_INTEGER);
    } catch {
      // Refused by a later rule: the parser's code ran all the same, and the worker is as ready.
    }
    send({ type: "ready" });
    return;
  }
  try {
    const statement = parseSelect(message.sql, maxQueryBytes);
    const query = validateStatement(statement, message.sql, catalog);
    send({ type: "valid", id: message.id, query: toPlain(query, catalog) });
  } catch (error) {
    const refused = error instanceof BadRequestError;
    send({ type: "invalid", id: message.id, refused, message: error instanceof Error ? error.message : String(error) });
  }
};
