/**
 * A linear scan of query text into tokens, as SQLite's tokenizer splits it: strings, quoted
 * identifiers and comments are single tokens, so a parenthesis or keyword inside them is not
 * structure. It exists so that precheck.ts can bound the parser's work before the parser runs
 * (ARCHITECTURE.md §4 "Validation is bounded"); it does not validate anything the parser checks.
 */
import { refuse } from "./refusals.ts";

export type TokenKind = "word" | "quoted" | "string" | "number" | "punct";

export interface Token {
  kind: TokenKind;
  /** Upper-cased for words; the character(s) for punctuation; empty for the rest (not needed). */
  text: string;
  start: number;
  /** The index after the token's last character. */
  end: number;
}

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 128;
/** SQLite identifiers: a letter, '_' or any non-ASCII character, then also digits and '$'. */
const isWordPart = (c: number) => isLetter(c) || isDigit(c) || c === 36;
/** Numbers run on through letters, digits, '_' and '.' (e.g. 1e5, 0x1F, 1_000, 5abc): never structure. */
const isNumberPart = (c: number) => isLetter(c) || isDigit(c) || c === 46;
/** Two-character operators, so that `<=` is one token and `||` is not two pipes. */
const PAIRS = new Set(["<=", ">=", "<>", "!=", "==", "||", "<<", ">>", "->"]);

/** Tokens of `sql`, or a 400 for text that cannot be tokenised (unterminated quote or comment, `#`). */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const ch = sql[i]!;
    const code = sql.charCodeAt(i);
    const start = i;
    if (isSpace(code)) {
      i++;
    } else if (ch === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? n : end + 1;
    } else if (ch === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      if (end === -1) refuse(`Unterminated comment starting at character ${start + 1}: close it with */`);
      i = end + 2;
    } else if (ch === "'" || ch === '"' || ch === "`") {
      i = skipQuoted(sql, i, ch);
      tokens.push({ kind: ch === "'" ? "string" : "quoted", text: "", start, end: i });
    } else if (ch === "[") {
      const end = sql.indexOf("]", i);
      if (end === -1) refuse(`Unterminated [identifier] starting at character ${start + 1}`);
      i = end + 1;
      tokens.push({ kind: "quoted", text: "", start, end: i });
    } else if ((ch === "x" || ch === "X") && sql[i + 1] === "'") {
      i = skipQuoted(sql, i + 1, "'");
      tokens.push({ kind: "string", text: "", start, end: i });
    } else if (isLetter(code)) {
      i++;
      while (i < n && isWordPart(sql.charCodeAt(i))) i++;
      tokens.push({ kind: "word", text: sql.slice(start, i).toUpperCase(), start, end: i });
    } else if (isDigit(code) || (ch === "." && isDigit(sql.charCodeAt(i + 1)))) {
      i++;
      while (i < n && isNumberPart(sql.charCodeAt(i))) i++;
      tokens.push({ kind: "number", text: "", start, end: i });
    } else if (ch === "#") {
      // sql-parser-cst reads `#` to end of line as a comment; SQLite does not (`#x` is a parameter
      // there), so `SELECT #x⏎ col FROM t` would be validated as one query and run as another.
      refuse("'#' comments are not supported: use -- or /* */");
    } else {
      const pair = sql.slice(i, i + 2);
      const text = PAIRS.has(pair) ? pair : ch;
      i += text.length;
      tokens.push({ kind: "punct", text, start, end: i });
    }
  }
  return tokens;
}

/** The index after the closing quote; a doubled quote is an escaped one. */
function skipQuoted(sql: string, open: number, quote: string): number {
  let i = open + 1;
  for (;;) {
    const close = sql.indexOf(quote, i);
    if (close === -1) {
      const what = quote === "'" ? "string literal" : "quoted identifier";
      refuse(`Unterminated ${what} starting at character ${open + 1}: close it with ${quote}`);
    }
    if (sql[close + 1] !== quote) return close + 1;
    i = close + 2;
  }
}
