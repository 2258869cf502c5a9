/**
 * From query text to the one SELECT statement to validate (DESIGN.md §4): size limit first (before
 * any parsing), then sql-parser-cst, then "exactly one statement". Parse failures become one-line
 * 400s. The text SQLite later runs is a slice of this same input, so anything where the parser and
 * SQLite could read the text differently is refused here.
 */
import { FormattedSyntaxError, parse, type Program, type SelectStmt } from "sql-parser-cst";
import { ALLOWED_NODES, LIMITS } from "./allowlist.ts";
import { operatorName } from "./expression.ts";
import { refuse, shown, TOO_DEEP } from "./refusals.ts";

export function parseSelect(sql: string, maxQueryBytes: number): SelectStmt {
  const bytes = Buffer.byteLength(sql, "utf8");
  if (bytes > maxQueryBytes) refuse(`Query is ${bytes} bytes; the limit is ${maxQueryBytes} bytes: shorten the query`);
  // SQLite stops reading at a NUL, so text after it would be validated but never run.
  if (sql.includes("\0")) refuse("Query contains a NUL character: remove it");
  const separators = countSeparators(sql);
  if (separators > LIMITS.maxListSeparators) {
    refuse(`Query has ${separators} list items; the limit is ${LIMITS.maxListSeparators}: shorten the lists (IN lists take at most ${LIMITS.maxInListItems} items)`);
  }
  const program = parseProgram(sql);
  const statements = program.statements.filter((s) => s.type !== "empty");
  if (statements.length === 0) refuse("Empty query: send one SELECT statement");
  if (statements.length > 1) refuse("Several statements are not allowed: send one SELECT statement");
  refuseHashComments(program);
  const statement = statements[0]!;
  if (statement.type === "compound_select_stmt") {
    refuse(`${operatorName(statement.operator)} is not supported: query a single table with one SELECT`);
  }
  if (statement.type !== "select_stmt" || !(ALLOWED_NODES.statement as readonly string[]).includes(statement.type)) {
    const word = statement.range ? sql.slice(statement.range[0], statement.range[1]).match(/^[A-Za-z_]+/)?.[0] : undefined;
    refuse(`Only SELECT statements are allowed; got ${shown((word ?? statement.type).toUpperCase())}`);
  }
  return statement;
}

/** Commas outside '…' and "…" (a cheap bound on list lengths before the parser sees the text). */
function countSeparators(sql: string): number {
  let count = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === ",") {
      count++;
    }
  }
  return count;
}

function parseProgram(sql: string): Program {
  try {
    return parse(sql, {
      dialect: "sqlite",
      includeRange: true,
      includeComments: true,
      // Recognised only so that they can be refused by name rather than as a syntax error.
      paramTypes: ["?", "?nr", ":name", "@name", "$name"],
    });
  } catch (error) {
    // The parser recurses once per nesting level; thousands of '(' exhaust the stack first.
    if (error instanceof RangeError) refuse(TOO_DEEP);
    if (error instanceof FormattedSyntaxError) refuse(syntaxMessage(error.message));
    throw error;
  }
}

/** "SQL syntax error near "x" (line 1, column 8)" from sql-parser-cst's multi-line report. */
function syntaxMessage(report: string): string {
  const found = report.match(/^Syntax Error: Unexpected (.*)$/m)?.[1] ?? "input";
  const at = report.match(/^--> .*:(\d+):(\d+)$/m);
  const where = at ? ` (line ${at[1]}, column ${at[2]})` : "";
  return `SQL syntax error near ${shown(found)}${where}: check the query against the Simplified SQL grammar`;
}

/**
 * The parser reads `#` to end of line as a comment; SQLite does not (`#x` is a parameter there), so
 * `SELECT #x⏎ col FROM t` would be validated as one query and run as another. Walks iteratively:
 * the tree may be deep until checkExpression has bounded it.
 */
function refuseHashComments(program: Program): void {
  const pending: unknown[] = [program];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
    } else if (value !== null && typeof value === "object") {
      const node = value as { type?: unknown; text?: unknown };
      if (node.type === "line_comment" && String(node.text).startsWith("#")) {
        refuse("'#' comments are not supported: use -- or /* */");
      }
      pending.push(...Object.values(value));
    }
  }
}
