/**
 * From query text to the one SELECT statement to validate (ARCHITECTURE.md §4): the linear checks of
 * precheck.ts first (size, quotes, parentheses, the parser's estimated work), then sql-parser-cst,
 * then "exactly one statement". Parse failures become one-line 400s. The text SQLite later runs is
 * a slice of this same input, so anything where the parser and SQLite could read the text
 * differently is refused (here, in precheck.ts and lexer.ts).
 */
import { FormattedSyntaxError, parse, type Program, type SelectStmt } from "sql-parser-cst";
import { ALLOWED_NODES } from "./allowlist.ts";
import { operatorName } from "./expression.ts";
import { precheckQuery } from "./precheck.ts";
import { refuse, shown, TOO_DEEP } from "./refusals.ts";

export function parseSelect(sql: string, maxQueryBytes: number): SelectStmt {
  precheckQuery(sql, maxQueryBytes);
  const program = parseProgram(sql);
  const statements = program.statements.filter((s) => s.type !== "empty");
  if (statements.length === 0) refuse("Empty query: send one SELECT statement");
  if (statements.length > 1) refuse("Several statements are not allowed: send one SELECT statement");
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
