/**
 * LIKE and GLOB with SQLite's meaning (func.c patternCompare) on PostgreSQL.
 * - LIKE folds the case of ASCII letters only. PostgreSQL's ILIKE lowers both sides with the
 *   operands' collation, and lower() under COLLATE "C" folds ASCII only: `x COLLATE "C" ILIKE p`
 *   is SQLite's LIKE, whatever the database's collation. SQLite has no escape character unless one
 *   is given; PostgreSQL's default is `\`, so every pattern is written with an explicit ESCAPE.
 * - GLOB is case-sensitive, with `*`, `?` and `[...]` classes (ranges by code point, `^` negates,
 *   `]` first is a member): without classes it is a LIKE, with them a POSIX regular expression in
 *   which every character but letters and digits is written as a \u escape.
 */
import { notAvailable } from "./refusal.ts";
import { asText, isNull, NULL_VALUE, neverUnlessNull, type Value } from "./values.ts";
import { textLiteral } from "./literals.ts";
import { dialect } from "./dialect.ts";

const ESCAPE = "E'\\\\'";

/** A literal character of a pattern, escaped for a PostgreSQL LIKE pattern with ESCAPE '\'. */
const likeCharacter = (c: string) => (c === "%" || c === "_" || c === "\\" ? `\\${c}` : c);

export function like(x: Value, pattern: Value, escape: string | null, negated: boolean, construct: string): string {
  if (isNull(x) || isNull(pattern)) return NULL_VALUE.sql;
  const subject = asText(x, construct);
  const p = asText(pattern, construct);
  if (escape === "%" || escape === "_") notAvailable(`${construct}, with ESCAPE '${escape}'`, "choose an escape character that is not a wildcard");
  let test: string;
  if (p.constant?.kind === "text") {
    const translated = likePattern(p.constant.value, escape);
    test = translated === null ? neverUnlessNull(subject) : dialect().asciiCaselessLike(subject.sql, textLiteral(translated), ESCAPE);
  } else {
    // A pattern read from the table: PostgreSQL fails on one that ends with the escape character.
    if (escape !== null) notAvailable(`${construct}, with ESCAPE and a pattern that is not a literal`, "write the pattern as a literal");
    test = dialect().asciiCaselessLike(subject.sql, p.sql, "''");
  }
  return negated ? `(NOT ${test})` : test;
}

/** SQLite's LIKE pattern as PostgreSQL's (ESCAPE '\'); null when it can match nothing (it ends with the escape character). */
function likePattern(pattern: string, escape: string | null): string | null {
  const chars = [...pattern];
  let out = "";
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (escape !== null && c === escape) {
      const next = chars[++i];
      if (next === undefined) return null;
      out += likeCharacter(next);
    } else if (c === "%" || c === "_") {
      out += c;
    } else {
      out += likeCharacter(c);
    }
  }
  return out;
}

type GlobToken = { any: true } | { one: true } | { literal: string } | { set: { from: number; to: number }[]; invert: boolean };

export function glob(x: Value, pattern: Value, negated: boolean, construct: string): string {
  if (isNull(x) || isNull(pattern)) return NULL_VALUE.sql;
  const subject = asText(x, construct);
  const p = asText(pattern, construct);
  if (p.constant?.kind !== "text") return notAvailable(`${construct}, with a pattern that is not a literal`, "write the GLOB pattern as a literal");
  const tokens = globTokens(p.constant.value);
  let test: string;
  if (tokens === null) test = neverUnlessNull(subject);
  else if (tokens.every((t) => !("set" in t))) {
    const translated = tokens.map((t) => ("any" in t ? "%" : "one" in t ? "_" : likeCharacter((t as { literal: string }).literal))).join("");
    test = `(${dialect().binary(subject.sql)} LIKE ${textLiteral(translated)} ESCAPE ${ESCAPE})`;
  } else {
    const regex = globRegex(tokens);
    test = regex === null ? neverUnlessNull(subject) : dialect().regexMatch(subject.sql, textLiteral(regex));
  }
  return negated ? `(NOT ${test})` : test;
}

/** The pattern read as SQLite reads it; null when it can match nothing (a class left open). */
function globTokens(pattern: string): GlobToken[] | null {
  const chars = [...pattern].map((c) => c.codePointAt(0)!);
  const tokens: GlobToken[] = [];
  const RIGHT = 0x5d; // ]
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === 0x2a) tokens.push({ any: true });
    else if (c === 0x3f) tokens.push({ one: true });
    else if (c === 0x5b) {
      // As func.c: '^' first inverts, ']' first is a member, 'a-z' a range after a member, '-' elsewhere a member.
      const set: { from: number; to: number }[] = [];
      let invert = false;
      let j = i + 1;
      if (chars[j] === 0x5e) {
        invert = true;
        j++;
      }
      if (chars[j] === RIGHT) {
        set.push({ from: RIGHT, to: RIGHT });
        j++;
      }
      let prior = 0;
      while (j < chars.length && chars[j] !== RIGHT) {
        const member = chars[j]!;
        if (member === 0x2d && j + 1 < chars.length && chars[j + 1] !== RIGHT && prior > 0) {
          set.push({ from: prior, to: chars[j + 1]! });
          j += 2;
          prior = 0;
          continue;
        }
        set.push({ from: member, to: member });
        prior = member;
        j++;
      }
      if (j >= chars.length) return null;
      tokens.push({ set, invert });
      i = j;
    } else tokens.push({ literal: String.fromCodePoint(c) });
  }
  return tokens;
}

const regexCharacter = (code: number) => dialect().regexCharacter(code);

/** An anchored advanced regular expression; null when a class can match nothing (so the pattern neither). */
function globRegex(tokens: GlobToken[]): string | null {
  let out = "^";
  for (const t of tokens) {
    if ("any" in t) out += ".*";
    else if ("one" in t) out += ".";
    else if ("literal" in t) out += regexCharacter(t.literal.codePointAt(0)!);
    else {
      // A range written high to low contains nothing in SQLite; PostgreSQL refuses it.
      const members = t.set.filter((m) => m.from <= m.to);
      if (members.length === 0) {
        if (!t.invert) return null;
        out += ".";
        continue;
      }
      const items = members.map((m) => (m.from === m.to ? regexCharacter(m.from) : `${regexCharacter(m.from)}-${regexCharacter(m.to)}`));
      out += `[${t.invert ? "^" : ""}${items.join("")}]`;
    }
  }
  return `${out}$`;
}
