/**
 * How an SQLite error reaches the client (ARCHITECTURE.md §8): an error caused by the query itself
 * (wrong arguments, integer overflow in abs(), a string or blob too big, a malformed strftime
 * format…) is the client's to fix, a 400 with SQLite's message; anything else is the server's, a
 * 500. One classification for the HTTP thread and the query workers.
 */

/** SQLite result codes that mean "this query cannot be answered as written", not "the server broke". */
const CLIENT_FAULT_CODES = new Set(["SQLITE_ERROR", "SQLITE_TOOBIG", "SQLITE_RANGE", "SQLITE_MISMATCH"]);

export function sqliteErrorReply(error: unknown): { status: 400 | 500; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code ?? "";
  return CLIENT_FAULT_CODES.has(code) ? { status: 400, message: `SQLite error: ${message}` } : { status: 500, message: `Database error: ${message}` };
}
