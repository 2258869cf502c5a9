/**
 * The target of the compiler of SQLite's meaning (DESIGN.md §14 "One dialect"): the compiler in
 * this folder writes SQL that PostgreSQL and DuckDB both read the same way for most constructs
 * (`::int8`, `::float8`, NULLIF, CASE, EXTRACT, `AT TIME ZONE`, E'…' strings); where they part
 * (function names, integer division, collations, LIKE's case folding, regular expressions, date
 * formatting, decimal and blob literals) it asks the dialect being compiled for. PostgreSQL's is
 * here; DuckDB's is engines/duckdb/dialect.ts.
 *
 * The dialect is the compilation's, set by `compilingFor` around one synchronous compile: the
 * helpers that write SQL (values.ts, literals.ts, …) read it without every call passing it on.
 */

export interface Dialect {
  /** The engine's name in refusals and failsOnData sentences: "… on tables served from PostgreSQL". */
  engine: string;
  /** A built-in function by its PostgreSQL name: pg_catalog-qualified there (no user function can shadow it). */
  fn(name: "abs" | "trunc" | "floor" | "length" | "substr" | "btrim" | "ltrim" | "rtrim" | "replace" | "strpos"): string;
  /** Integer division truncating toward zero (SQLite's, C's), NULL when `y` is 0. */
  integerDivide(x: string, y: string): string;
  /** Text compared and sorted by code point (SQLite's BINARY collation). */
  binary(sql: string): string;
  /** `binary` for ORDER BY keys (where a collation is always allowed). */
  binaryOrder(sql: string): string;
  /** A decimal number's literal, exactly as written (15 significant digits at most), to compare with a NUMERIC column. */
  numericLiteral(text: string): string;
  blobLiteral(hex: string): string;
  /** UTF-8 bytes of text, as a blob. */
  utf8Bytes(sql: string): string;
  /** A blob's length in bytes, or null when the engine has no such function. */
  blobLength(sql: string): string | null;
  /** Whether instr() and substr() of blobs can be written. */
  blobPositions: boolean;
  /** lower()/upper() of ASCII letters only, as SQLite's. */
  asciiCase(name: "lower" | "upper", sql: string): string;
  /** `subject LIKE pattern`, folding the case of ASCII letters only; `escape` is SQL (E'\\' or ''). */
  asciiCaselessLike(subject: string, pattern: string, escape: string): string;
  /** `subject` matches the whole anchored regular expression `regex` (SQL text), `.` matching newlines too. */
  regexMatch(subject: string, regex: string): string;
  /** One character of a regular expression, written as an escape unless it is a letter or a digit. */
  regexCharacter(code: number): string;
  /** Text of a date ('YYYY-MM-DD', years 0001–9999 with four digits). */
  dateText(sql: string): string;
  /** Text of a timestamp (no zone): 'YYYY-MM-DD HH:MM:SS', then the fraction of a second without trailing zeros. */
  timestampText(sql: string): string;
  /** A timestamp's fields as digits: `picture` is made of PostgreSQL to_char's YYYY MM DD HH24 MI SS and separators. */
  formatTimestamp(sql: string, picture: string): string;
  /** SQL of `substr(subject, start, count)` with PostgreSQL's meaning for a start below 1 (positions before the first). */
  substr(subject: string, start: string, count: string): string;
  /** Whether a double beyond ±1.8e308 is an error (PostgreSQL) rather than ±Infinity (DuckDB). */
  realOverflowFails: boolean;
}

export const POSTGRES: Dialect = {
  engine: "PostgreSQL",
  fn: (name) => `pg_catalog.${name}`,
  integerDivide: (x, y) => `(${x} / NULLIF(${y}, 0))`,
  binary: (sql) => `${sql} COLLATE "C"`,
  binaryOrder: (sql) => `${sql} COLLATE "C"`,
  numericLiteral: (text) => `'${text}'::numeric`,
  blobLiteral: (hex) => `E'\\\\x${hex}'::bytea`,
  utf8Bytes: (sql) => `pg_catalog.convert_to(${sql}, 'UTF8')`,
  blobLength: (sql) => `pg_catalog.length(${sql})`,
  blobPositions: true,
  // lower() under COLLATE "C" folds ASCII letters only, as SQLite's.
  asciiCase: (name, sql) => `pg_catalog.${name}(${sql} COLLATE "C")`,
  // ILIKE lowers both sides with the operands' collation: under "C", ASCII letters only.
  asciiCaselessLike: (subject, pattern, escape) => `(${subject} COLLATE "C" ILIKE ${pattern} ESCAPE ${escape})`,
  regexMatch: (subject, regex) => `(${subject} COLLATE "C" ~ ${regex})`,
  regexCharacter: (code) =>
    /^[A-Za-z0-9]$/.test(String.fromCodePoint(code))
      ? String.fromCodePoint(code)
      : code > 0xffff
        ? `\\U${code.toString(16).padStart(8, "0")}`
        : `\\u${code.toString(16).padStart(4, "0")}`,
  dateText: (sql) => `pg_catalog.to_char(${sql}, 'YYYY-MM-DD')`,
  timestampText: (sql) => `pg_catalog.regexp_replace(pg_catalog.to_char(${sql}, 'YYYY-MM-DD HH24:MI:SS.US'), E'\\\\.?0+$', '')`,
  formatTimestamp: (sql, picture) => `pg_catalog.to_char(${sql}, '${picture}')`,
  substr: (subject, start, count) => `pg_catalog.substr(${subject}, ${start}, ${count})`,
  realOverflowFails: true,
};

let current: Dialect = POSTGRES;

/** The dialect of the compilation under way. */
export function dialect(): Dialect {
  return current;
}

/** Runs one (synchronous) compilation for `target`. */
export function compilingFor<T>(target: Dialect, compile: () => T): T {
  const prior = current;
  current = target;
  try {
    return compile();
  } finally {
    current = prior;
  }
}
