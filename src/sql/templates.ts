/**
 * Parsed statements by the shape of their text (ARCHITECTURE.md §4 "Validation is bounded"). A buyer
 * asking new questions sends texts that differ from earlier ones only in their literals
 * (`WHERE block = 18041666` then `WHERE block = 18041667`). Parsing is nearly all of validation's
 * cost (~0.3 ms for a short query, on a validation worker), so the statement a worker parsed for one
 * text is kept as the template of its shape, and a later text of the same shape gets its statement
 * by copying the template with that text's literals and positions, on the HTTP thread. It is then
 * validated by the same code as a parsed one (dialect.ts `validateStatement`), so every rule,
 * literal values included (LIMIT, string growth), is checked against the new text.
 *
 * Two texts have the same shape when their tokens (lexer.ts) are the same, character for character,
 * except plain decimal numbers and '…' strings, and whitespace separates the same tokens. Within
 * a shape, the parser reads the same structure: a literal's content never changes how the text
 * around it parses. Texts with comments, other whitespace than space, tab, CR and LF, or more than
 * MAX_TEMPLATE_TOKENS tokens are always parsed (their shapes are never kept).
 *
 * A template is kept only if every position in it falls on a token boundary and every literal
 * token is exactly one literal node whose value is what `literalValue` computes for its text; so
 * copying never guesses.
 */
import type { Node, SelectStmt } from "sql-parser-cst";
import type { Token } from "./lexer.ts";

/** Texts with more tokens are parsed every time: copying stays a few microseconds on the HTTP thread. */
export const MAX_TEMPLATE_TOKENS = 512;
/** Shapes kept, least recently used first out. */
const CAPACITY = 1024;

const PLAIN_NUMBER = /^[0-9]+(?:\.[0-9]+)?$/;

type LiteralKind = "number_literal" | "string_literal";

interface Template {
  statement: SelectStmt;
  /** Token index by the template text's token starts, and by its token ends. */
  starts: Map<number, number>;
  ends: Map<number, number>;
}

export class StatementTemplates {
  private readonly templates = new Map<string, Template>();

  /** The statement of `sql` built from the template of its shape, or null when there is none. */
  instantiate(sql: string, tokens: Token[]): SelectStmt | null {
    const shape = shapeOf(sql, tokens);
    const template = shape === null ? undefined : this.templates.get(shape);
    if (template === undefined) return null;
    this.templates.delete(shape!);
    this.templates.set(shape!, template);
    return copyNode(template.statement, (position, side) => {
      const index = (side === "start" ? template.starts : template.ends).get(position)!;
      return side === "start" ? tokens[index]!.start : tokens[index]!.end;
    }, (node) => {
      const token = tokens[template.starts.get(node.range![0])!]!;
      const kind = literalKindOf(sql, token);
      if (kind === null) return null; // a literal written the same in every text of the shape
      const text = sql.slice(token.start, token.end);
      return { text, value: literalValue(kind, text) };
    }) as SelectStmt;
  }

  /** Keeps the parsed statement of a valid text as the template of its shape, if it can be one. */
  remember(sql: string, tokens: Token[], statement: SelectStmt): void {
    const shape = shapeOf(sql, tokens);
    if (shape === null || this.templates.has(shape)) return;
    const starts = new Map(tokens.map((token, index) => [token.start, index]));
    const ends = new Map(tokens.map((token, index) => [token.end, index]));
    if (!fitsTokens(sql, tokens, statement, starts, ends)) return;
    this.templates.set(shape, { statement, starts, ends });
    if (this.templates.size > CAPACITY) this.templates.delete(this.templates.keys().next().value!);
  }

  get size(): number {
    return this.templates.size;
  }
}

/** The literal kind a token's content may vary in, or null when its text is part of the shape. */
function literalKindOf(sql: string, token: Token): LiteralKind | null {
  if (token.kind === "number") return PLAIN_NUMBER.test(sql.slice(token.start, token.end)) ? "number_literal" : null;
  if (token.kind === "string" && sql.charCodeAt(token.start) === 39 /* ' */) return "string_literal";
  return null;
}

/** What sql-parser-cst gives as the value of a plain decimal number or a '…' string. */
export function literalValue(kind: LiteralKind, text: string): number | string {
  return kind === "number_literal" ? Number.parseFloat(text) : text.slice(1, -1).replaceAll("''", "'");
}

/** Space, tab, CR and LF: whitespace to every reader of the text. */
const isPlainSpace = (code: number) => code === 32 || code === 9 || code === 10 || code === 13;

/**
 * A text's shape, as a string: `_` for whitespace, `n` and `s` for a varying number or string, and
 * `<length>:<text>` for any other token (a length prefix cannot be mistaken for a marker). Null
 * when the text's shape is never kept (comments, other whitespace, too many tokens).
 */
export function shapeOf(sql: string, tokens: Token[]): string | null {
  if (tokens.length > MAX_TEMPLATE_TOKENS) return null;
  let shape = "";
  let previousEnd = 0;
  for (const token of tokens) {
    if (token.start > previousEnd) {
      if (!onlyPlainSpace(sql, previousEnd, token.start)) return null;
      shape += "_";
    }
    const kind = literalKindOf(sql, token);
    shape += kind === "number_literal" ? "n" : kind === "string_literal" ? "s" : `${token.end - token.start}:${sql.slice(token.start, token.end)}`;
    previousEnd = token.end;
  }
  return onlyPlainSpace(sql, previousEnd, sql.length) ? shape : null;
}

function onlyPlainSpace(sql: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isPlainSpace(sql.charCodeAt(i))) return false;
  return true;
}

/** Every range on token boundaries; every varying literal token exactly one literal node with the expected value. */
function fitsTokens(sql: string, tokens: Token[], statement: SelectStmt, starts: Map<number, number>, ends: Map<number, number>): boolean {
  const literalNodes = new Map<number, number>();
  let fits = true;
  const visit = (value: unknown): void => {
    if (!fits || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) return value.forEach(visit);
    const node = value as Node;
    if (node.range !== undefined) {
      const [start, end] = node.range;
      if (!starts.has(start) || !ends.has(end)) fits = false;
      if (node.type === "number_literal" || node.type === "string_literal") {
        const index = starts.get(start)!;
        const token = tokens[index];
        const kind = token === undefined ? null : literalKindOf(sql, token);
        if (kind !== null) {
          const text = sql.slice(token!.start, token!.end);
          const same = kind === node.type && token!.end === end && node.text === text && node.value === literalValue(kind, text);
          if (!same) fits = false;
          literalNodes.set(index, (literalNodes.get(index) ?? 0) + 1);
        }
      }
    }
    for (const key in node) if (key !== "range") visit((node as unknown as Record<string, unknown>)[key]);
  };
  visit(statement);
  if (!fits) return false;
  // Every varying literal is copied from exactly one node (none is read some other way).
  return tokens.every((token, index) => literalKindOf(sql, token) === null || literalNodes.get(index) === 1);
}

/** A deep copy of `node` with positions mapped and varying literals replaced. */
function copyNode(
  value: unknown,
  position: (at: number, side: "start" | "end") => number,
  literal: (node: Node) => { text: string; value: number | string } | null,
): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => copyNode(item, position, literal));
  const node = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key in node) copy[key] = key === "range" ? undefined : copyNode(node[key], position, literal);
  const range = node.range as [number, number] | undefined;
  if (range !== undefined) copy.range = [position(range[0], "start"), position(range[1], "end")];
  if ((node.type === "number_literal" || node.type === "string_literal") && range !== undefined) Object.assign(copy, literal(node as unknown as Node) ?? {});
  return copy;
}
