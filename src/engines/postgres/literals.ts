/**
 * Names and values written into PostgreSQL SQL. COPY … TO STDOUT takes no bind parameters, so
 * values are inlined: strings as E'…' with `\` and `'` doubled, which reads the same whatever the
 * session's standard_conforming_strings; every other literal in a form whose meaning depends on no
 * setting (typed with ::, ISO dates). Text goes to the server as UTF-8: the connection's
 * client_encoding must be UTF8.
 */
import { realText } from "../../sql/statement.ts";
import { dialect } from "./dialect.ts";
import { notAvailable } from "./refusal.ts";

/** A double-quoted identifier (`"` doubled): any name, never a keyword or an operator. */
export function quoteIdentifier(name: string): string {
  if (name.includes("\u0000")) notAvailable(`A name with a NUL character`);
  return `"${name.replaceAll('"', '""')}"`;
}

/** A text literal of type text. PostgreSQL text holds no NUL character, and UTF-8 no lone surrogate. */
export function textLiteral(value: string): string {
  if (value.includes("\u0000")) notAvailable("Text with a NUL character (\\u0000)", `${dialect().engine} text cannot hold it`);
  if (!value.isWellFormed()) notAvailable("Text with an unpaired UTF-16 surrogate", "send valid Unicode");
  return `E'${value.replaceAll("\\", "\\\\").replaceAll("'", "''")}'::text`;
}

export function integerLiteral(value: bigint): string {
  return value < 0n ? `(${value})::int8` : `${value}::int8`;
}

/** A double, as the shortest decimal that reads back as it ('Infinity', '-0' included): float8 input rounds correctly. */
export function realLiteral(value: number): string {
  return `'${realText(value)}'::float8`;
}

export function numericLiteral(text: string): string {
  return dialect().numericLiteral(text);
}

export function blobLiteral(hex: string): string {
  return dialect().blobLiteral(hex);
}
