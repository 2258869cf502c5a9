/**
 * Checks on the raw query text that run before the parser, each linear in the text, so that no
 * text can make validation slow (ARCHITECTURE.md §4 "Validation is bounded"). sql-parser-cst
 * backtracks without memoising: a construct it can read two ways is read twice, and such
 * constructs nested in each other are read 2^n times. Measured on sql-parser-cst 0.42, the
 * constructs that do this are:
 * - a parenthesis whose content starts with another '(' (it may be a parenthesised SELECT),
 *   when the content fails to parse: 16 nested '((' took 0.8 s, and each level doubles it;
 * - a parenthesis starting with SELECT or VALUES (a subquery), when it fails: about 3x a level;
 * - the pattern of LIKE / NOT LIKE (read once expecting ESCAPE, then again without), even when
 *   it parses: LIKE nested in LIKE patterns 14 deep took 0.6 s;
 * - an IN list, when it fails: about 2x a level;
 * - WITH (a CTE): about 4x a level.
 * Operator chains, NOT chains, function calls, CAST and long lists are linear (a 16 KB query of
 * any of them parses in under 50 ms). So the checks are: the size limit, no WITH (never allowed),
 * balanced parentheses outside quotes and comments, a nesting limit, no parenthesis inside an IN
 * list (the grammar allows only literals there), and an estimate of the parser's extra work from
 * the other constructs above, which must stay under LIMITS.maxParserRework.
 */
import { LIMITS } from "./allowlist.ts";
import { tokenize, type Token } from "./lexer.ts";
import { REJECTED_CONSTRUCTS, refuse, TOO_DEEP } from "./refusals.ts";

/** Refuses a text that could make validation slow; returns its tokens (lexer.ts). */
export function precheckQuery(sql: string, maxQueryBytes: number): Token[] {
  const bytes = Buffer.byteLength(sql, "utf8");
  if (bytes > maxQueryBytes) {
    refuse(`Query is ${bytes} bytes; the server's limit (max_query_bytes) is ${maxQueryBytes} bytes: shorten the query`);
  }
  // SQLite stops reading at a NUL, so text after it would be validated but never run.
  if (sql.includes("\0")) refuse("Query contains a NUL character: remove it");
  const tokens = tokenize(sql);
  // Never allowed, and nested CTEs cost the parser the most of all.
  if (tokens.some((token) => isWord(token, "WITH"))) refuse(REJECTED_CONSTRUCTS.with_clause!);
  checkSeparators(tokens);
  checkParentheses(tokens);
  checkParserRework(tokens);
  return tokens;
}

const isPunct = (token: Token | undefined, text: string) => token?.kind === "punct" && token.text === text;
const isWord = (token: Token | undefined, ...words: string[]) => token?.kind === "word" && words.includes(token.text);

/** Commas outside quotes: room for the largest IN list plus a wide select list, and no more. */
function checkSeparators(tokens: Token[]): void {
  let separators = 0;
  for (const token of tokens) if (isPunct(token, ",")) separators++;
  if (separators > LIMITS.maxListSeparators) {
    refuse(
      `Query has ${separators} list items; the limit is ${LIMITS.maxListSeparators}: shorten the lists (IN lists take at most ${LIMITS.maxInListItems} items)`,
    );
  }
}

/** Balanced, none inside an IN list, and at most maxExpressionDepth deep. */
function checkParentheses(tokens: Token[]): void {
  const open: Token[] = [];
  let inList: Token | null = null;
  let deepest = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (isPunct(token, "(")) {
      if (inList) refuse(`IN lists take literal values only, without parentheses: remove the '(' at character ${token.start + 1}`);
      open.push(token);
      deepest = Math.max(deepest, open.length);
      if (isWord(tokens[i - 1], "IN")) inList = token;
    } else if (isPunct(token, ")")) {
      const opener = open.pop();
      if (!opener) refuse(`Unbalanced parentheses: the ')' at character ${token.start + 1} closes nothing`);
      if (opener === inList) inList = null;
    }
  }
  if (open.length > 0) refuse(`Unbalanced parentheses: the '(' at character ${open.at(-1)!.start + 1} is never closed`);
  if (deepest > LIMITS.maxExpressionDepth) refuse(TOO_DEEP);
}

/** What multiplies the parser's work while it is open, and how to name it. */
interface Multiplier {
  factor: number;
  kind: "paren" | "subquery" | "in" | "like";
  /** The product of all factors below this one. */
  below: number;
}

const SUBQUERY_WORDS = ["SELECT", "VALUES"];
/** Where a LIKE pattern ends at its own nesting level (it also ends with its parenthesis). */
const PATTERN_ENDS = new Set([",", ";"]);
const PATTERN_END_WORDS = ["AND", "OR", "ESCAPE", "THEN", "WHEN", "ELSE", "END", "ORDER", "LIMIT", "GROUP", "HAVING", "WINDOW"];

/**
 * The parser's work beyond one reading of each token: every token costs the product of the
 * factors of the constructs it is inside, minus one. Pattern ends are over-estimated (a pattern
 * runs to the next AND, OR or comma), which only ever over-counts.
 */
export function checkParserRework(tokens: Token[], limit: number = LIMITS.maxParserRework): number {
  // One stack per parenthesis level: the parenthesis itself, then the LIKE patterns open in it.
  const levels: Multiplier[][] = [[]];
  let product = 1;
  let rework = 0;
  const push = (kind: Multiplier["kind"], factor: number) => {
    levels.at(-1)!.push({ factor, kind, below: product });
    product *= factor;
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    rework += product - 1;
    if (rework > limit) refuseRework(levels);
    if (isPunct(token, "(")) {
      const next = tokens[i + 1];
      levels.push([]);
      if (isWord(tokens[i - 1], "IN")) push("in", 2);
      else if (isPunct(next, "(")) push("paren", 2);
      else if (next?.kind === "word" && SUBQUERY_WORDS.includes(next.text)) push("subquery", 3);
    } else if (isPunct(token, ")")) {
      const level = levels.pop()!;
      if (level.length > 0) product = level[0]!.below;
    } else if (isWord(token, "LIKE")) {
      push("like", 2);
    } else if ((token.kind === "punct" && PATTERN_ENDS.has(token.text)) || isWord(token, ...PATTERN_END_WORDS)) {
      const level = levels.at(-1)!;
      const firstLike = level.findIndex((m) => m.kind === "like");
      if (firstLike >= 0) {
        product = level[firstLike]!.below;
        level.length = firstLike;
      }
    }
  }
  return rework;
}

function refuseRework(levels: Multiplier[][]): never {
  const open = new Set(levels.flat().map((m) => m.kind));
  const causes = [
    ["paren", "'((' (a parenthesis directly inside another)", "remove redundant parentheses"],
    ["like", "LIKE inside a LIKE pattern", "compare with LIKE at one level only"],
    ["subquery", "subquery", "query a single table without subqueries"],
    ["in", "IN list", "write IN lists of literals"],
  ] as const;
  const found = causes.filter(([kind]) => open.has(kind));
  refuse(
    `Query is too complex to validate: the parser's work multiplies with each nested ${found.map(([, what]) => what).join(" or ")}: ` +
      found.map(([, , fix]) => fix).join("; "),
  );
}
