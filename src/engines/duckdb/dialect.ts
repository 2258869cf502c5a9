/**
 * DuckDB as a target of the compiler of SQLite's meaning (DESIGN.md §14 "One dialect";
 * engines/postgres/dialect.ts). DuckDB reads PostgreSQL's casts, NULLIF, CASE, EXTRACT, AT TIME
 * ZONE (its built-in ICU) and E'…' strings alike; it differs, as checked against DuckDB 1.5:
 * - `/` of integers is a DOUBLE: `//` truncates toward zero, as SQLite's `/`.
 * - VARCHAR compares by bytes (code points) unless a column declares a collation: a column of a
 *   DuckDB file is read `COLLATE "C"` (types.ts duckColumn), and ORDER BY sorts COLLATE "C".
 * - ILIKE and lower() fold every letter: ASCII folding is translate() of A–Z, which costs about a
 *   microsecond a value (a LIKE on a 10M-row column: 13 s against 1.3 s for lower()). Of a column,
 *   a value whose bytes are its characters (strlen = length: ASCII only) is folded by lower()
 *   instead, exactly the same; only other values go through translate(). An expression is not
 *   repeated so (nested, its text would grow threefold a level): it is translated.
 * - Regular expressions are RE2: `\x{…}` escapes, the 's' option so that `.` matches a newline.
 * - Dates and timestamps cast to VARCHAR are SQLite's text (four-digit years, no trailing zeros).
 * - substr() counts a start below 1 from the end: PostgreSQL's meaning is written out.
 * - A DOUBLE overflows to ±Infinity, as SQLite's; INT64 overflow is an error, as PostgreSQL's.
 * - Blobs have no length(), position() or substr(): octet_length(), and refusals.
 */
import type { Dialect } from "../postgres/dialect.ts";

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
/** A column reference (`"name"`): repeating it costs nothing. */
const isColumn = (sql: string) => /^"(?:[^"]|"")*"$/.test(sql);
/** ASCII folding of `sql` to lower or upper case: lower()/upper() where the value is ASCII only, translate() otherwise. */
function asciiFold(sql: string, to: "lower" | "upper"): string {
  const translated = to === "lower" ? `translate(${sql}, '${UPPER}', '${LOWER}')` : `translate(${sql}, '${LOWER}', '${UPPER}')`;
  return isColumn(sql) ? `(CASE WHEN strlen(${sql}) = length(${sql}) THEN ${to}(${sql}) ELSE ${translated} END)` : translated;
}
const asciiLower = (sql: string) => asciiFold(sql, "lower");

/** to_char pictures the compiler writes, as strftime formats. */
const PICTURES: [RegExp, string][] = [
  [/YYYY/g, "%Y"],
  [/HH24/g, "%H"],
  [/MM/g, "%m"],
  [/DD/g, "%d"],
  [/MI/g, "%M"],
  [/SS/g, "%S"],
];

/** A number's text as a plain decimal literal (DuckDB reads `0.003` as DECIMAL(4,3) exactly); null when it would need more than 38 digits. */
export function plainDecimal(text: string): string | null {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-]?[0-9]+))?$/i.exec(text);
  if (match === null) return null;
  const [, sign, whole, fraction = "", exponent = "0"] = match;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  const padded = point <= 0 ? `${"0".repeat(1 - point)}${digits}` : point > digits.length ? digits.padEnd(point, "0") : digits;
  const at = Math.max(point, 1);
  const integer = padded.slice(0, at).replace(/^0+(?=[0-9])/, "");
  const decimals = padded.slice(at).replace(/0+$/, "");
  if (integer.length + decimals.length > 38) return null;
  return `${sign}${integer}${decimals === "" ? "" : `.${decimals}`}`;
}

export const DUCKDB_DIALECT: Dialect = {
  engine: "DuckDB",
  fn: (name) => (name === "btrim" ? "trim" : name),
  integerDivide: (x, y) => `(${x} // NULLIF(${y}, 0))`,
  binary: (sql) => sql,
  binaryOrder: (sql) => `${sql} COLLATE "C"`,
  numericLiteral: (text) => {
    const plain = plainDecimal(text);
    return plain === null ? `'${text}'::DOUBLE` : plain.startsWith("-") ? `(${plain})` : plain;
  },
  blobLiteral: (hex) => `from_hex('${hex}')`,
  utf8Bytes: (sql) => `encode(${sql})`,
  blobLength: (sql) => `octet_length(${sql})`,
  blobPositions: false,
  asciiCase: (name, sql) => asciiFold(sql, name),
  asciiCaselessLike: (subject, pattern, escape) => `(${asciiLower(subject)} LIKE ${asciiLower(pattern)} ESCAPE ${escape})`,
  regexMatch: (subject, regex) => `regexp_full_match(${subject}, ${regex}, 's')`,
  regexCharacter: (code) => (/^[A-Za-z0-9]$/.test(String.fromCodePoint(code)) ? String.fromCodePoint(code) : `\\x{${code.toString(16)}}`),
  dateText: (sql) => `CAST(${sql} AS VARCHAR)`,
  timestampText: (sql) => `CAST(${sql} AS VARCHAR)`,
  formatTimestamp: (sql, picture) => `strftime(${sql}, '${PICTURES.reduce((p, [from, to]) => p.replace(from, to), picture)}')`,
  substr: (subject, start, count) => {
    if (/^[1-9][0-9]*$/.test(start)) return `substr(${subject}, ${start}, ${count})`;
    const first = `GREATEST(${start}, 1)`;
    return `substr(${subject}, ${first}, GREATEST((${start}) + (${count}) - ${first}, 0))`;
  },
  realOverflowFails: false,
};
