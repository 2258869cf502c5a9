/**
 * Makes a query stoppable (ARCHITECTURE.md §4, §11). bun:sqlite cannot interrupt a statement, and a query
 * worker that is terminated only stops when SQLite hands control back to JavaScript: after a row
 * of the result. A WHERE that rejects row after row (or takes long per row) keeps SQLite busy in
 * one call, so a terminated worker would go on burning a core until the scan ends.
 *
 * So the WHERE expression the workers run is `arrow402_continue() AND (<validated expression>)`:
 * fixed text around the validated expression's own text, evaluated first for every row SQLite
 * looks at (an index still narrows the rows looked at). The worker defines the function (engines/sqlite/worker.ts):
 * it returns 1, or throws once the worker has been told to stop, which aborts the statement within
 * one row's work.
 *
 * A query without a WHERE returns to JavaScript after each row it outputs, except while SQLite
 * sorts (ORDER BY a column no index orders: every row is read before the first is output) or
 * skips (OFFSET: skipped rows are never output). Such a query gets `WHERE arrow402_continue()`
 * after its FROM table, so that it too stops within a row; the plan is unchanged (the call is
 * not indexable), at ~30 ns per row read.
 */

/** The SQL function the query workers define; a name no configured column can shadow (it is a call). */
export const CONTINUE_FUNCTION = "arrow402_continue";

/** `sql` with the WHERE expression at [start, end) guarded by CONTINUE_FUNCTION. */
export function guardWhere(sql: string, start: number, end: number): string {
  // The space: `WHERE(id > 1)` is valid SQL with none after WHERE.
  return `${sql.slice(0, start)} ${CONTINUE_FUNCTION}() AND (${sql.slice(start, end)})${sql.slice(end)}`;
}

/** `sql` (no WHERE) with `WHERE arrow402_continue()` inserted where its FROM clause ends. */
export function guardUnfiltered(sql: string, fromEnd: number): string {
  return `${sql.slice(0, fromEnd)} WHERE ${CONTINUE_FUNCTION}()${sql.slice(fromEnd)}`;
}
