/**
 * The allow-listed functions (src/sql/allowlist.ts FUNCTIONS) with SQLite's meaning on PostgreSQL,
 * each from SQLite's source (func.c, date.c) and checked against both servers (differential test):
 * - lower/upper fold ASCII letters only (COLLATE "C"); length counts characters of text, bytes of
 *   blobs; substr has SQLite's rules for a start at or below zero and a negative length (its start
 *   and length must be literals); trim, instr, replace as PostgreSQL's btrim, strpos, replace.
 * - round() rounds half away from zero on the double (SQLite adds ±0.5 and truncates, so
 *   round(0.49999999999999994) is 1); with decimal places it goes through SQLite's printf: refused.
 * - coalesce/ifnull keep each argument's kind (a mixture is compared choice by choice); nullif
 *   compares without affinity.
 * - date(), time(), datetime(), julianday(), unixepoch(), strftime() of one date or timestamp
 *   column, or a canonical literal; no modifiers, no 'now'; strftime with %Y %m %d %H %M %S %%.
 */
import { canonicalDate, compare } from "./comparisons.ts";
import { notAvailable } from "./refusal.ts";
import type { Scope } from "./expressions.ts";
import { doubleToInt64, numberFromText } from "./sqlite-numbers.ts";
import {
  asFloat8, asInt8, asText, boolAsInt, constantNumber, constantValue, isNull, NULL_VALUE, textForm, type Value,
} from "./values.ts";
import { textLiteral } from "./literals.ts";
import { dialect } from "./dialect.ts";

type Compiler = (args: Value[], construct: string, scope: Scope) => Value;

export function call(name: string, args: Value[], construct: string, scope: Scope): Value {
  const compiler = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
  if (compiler === undefined) return notAvailable(`${name}()`);
  return compiler(args, construct, scope);
}

const text = (sql: string): Value => ({ sql, class: "text", affinity: "none" });
const int = (sql: string): Value => ({ sql, class: "int", affinity: "none", narrow: true });

/** SQLite's lower()/upper(): ASCII letters only (sqlite3Tolower), as JavaScript folds them below. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const asciiUpper = (s: string) => s.replace(/[a-z]/g, (c) => c.toUpperCase());

const FUNCTIONS: Record<string, Compiler> = {
  abs([x], construct) {
    if (isNull(x!)) return NULL_VALUE;
    const n = boolAsInt(x!);
    const constant = constantNumber(n);
    if (typeof constant === "bigint") {
      if (constant === -(2n ** 63n)) notAvailable(`${construct} (integer overflow)`);
      return constantValue({ kind: "int", value: constant < 0n ? -constant : constant });
    }
    if (typeof constant === "number") return constantValue({ kind: "real", value: Math.abs(constant) });
    switch (n.class) {
      case "int":
        // abs(-9223372036854775808) is an error in both.
        return { sql: `${dialect().fn("abs")}(${asInt8(n)})`, class: "int", affinity: "none" };
      case "real":
      case "num":
      case "numeric":
        return { sql: `${dialect().fn("abs")}(${n.sql})`, class: n.class, affinity: "none", bound: n.bound };
      default:
        return notAvailable(`${construct}, abs() of text`, "SQLite reads text as the number it starts with");
    }
  },

  round([x, places], construct) {
    let digits = 0;
    if (places !== undefined) {
      if (isNull(places)) return NULL_VALUE;
      const n = constantNumber(boolAsInt(places));
      if (n === undefined) return notAvailable(`${construct}, round() with decimal places that are not a literal`);
      const whole = typeof n === "number" ? doubleToInt64(n) : n;
      if (whole > 2n ** 31n - 1n || whole < -(2n ** 31n)) return notAvailable(`${construct}, round() with ${whole} decimal places`);
      digits = Math.min(Math.max(Number(whole), 0), 30);
    }
    if (isNull(x!)) return NULL_VALUE;
    const v = boolAsInt(x!);
    const constant = constantNumber(v);
    if (constant !== undefined) {
      const r = Number(constant);
      if (r < -4503599627370496 || r > 4503599627370496) return constantValue({ kind: "real", value: r });
      if (digits === 0) return constantValue({ kind: "real", value: Number(BigInt(Math.trunc(r + (r < 0 ? -0.5 : 0.5)))) });
      if (typeof constant === "bigint") return constantValue({ kind: "real", value: r });
    }
    if (v.class === "int") return { sql: `(${asInt8(v)})::float8`, class: "real", affinity: "none" };
    if (v.class !== "real" && v.class !== "num" && v.class !== "numeric") return notAvailable(`${construct}, round() of text`, "SQLite reads text as the number it starts with");
    if (digits > 0) return notAvailable(`${construct}, round() to ${digits} decimal places`, "SQLite rounds through its own printf; round() to whole numbers, or compare the value itself");
    const r = v.class === "numeric" ? `(${v.sql})::float8` : v.sql;
    // func.c roundFunc: beyond 2^52 a double has no fraction; else (double)(sqlite_int64)(r ± 0.5).
    return {
      sql:
        `(CASE WHEN ${r} < '-4503599627370496'::float8 OR ${r} > '4503599627370496'::float8 THEN ${r} ` +
        `ELSE ${dialect().fn("trunc")}(${r} + CASE WHEN ${r} < '0'::float8 THEN '-0.5'::float8 ELSE '0.5'::float8 END) END)`,
      class: "real",
      affinity: "none",
    };
  },

  lower: ([x], construct) => caseFolded(x!, construct, "lower", asciiLower),
  upper: ([x], construct) => caseFolded(x!, construct, "upper", asciiUpper),

  length([x], construct) {
    if (isNull(x!)) return NULL_VALUE;
    if (x!.constant?.kind === "blob") return constantValue({ kind: "int", value: BigInt(x!.constant.hex.length / 2) });
    if (x!.class === "blob") return int(dialect().blobLength(x!.sql) ?? notAvailable(`${construct}, length() of a blob`));
    const t = asText(x!, construct);
    if (t.constant?.kind === "text") return constantValue({ kind: "int", value: BigInt([...t.constant.value].length) });
    return int(`${dialect().fn("length")}(${t.sql})`);
  },

  substr: substring,
  substring,

  trim: (args, construct) => trimmed("btrim", args, construct),
  ltrim: (args, construct) => trimmed("ltrim", args, construct),
  rtrim: (args, construct) => trimmed("rtrim", args, construct),

  instr([haystack, needle], construct) {
    if (isNull(haystack!) || isNull(needle!)) return NULL_VALUE;
    const blobs = [haystack!, needle!].filter((v) => v.class === "blob").length;
    if (blobs === 2) return dialect().blobPositions ? int(`POSITION(${needle!.sql} IN ${haystack!.sql})`) : notAvailable(`${construct}, instr() of blobs`);
    if (blobs === 1) return notAvailable(`${construct}, instr() of a blob and text`);
    const [h, n] = [asText(haystack!, construct), asText(needle!, construct)];
    return int(`${dialect().fn("strpos")}(${dialect().binary(h.sql)}, ${n.sql})`);
  },

  replace(args, construct) {
    if (args.some(isNull)) return NULL_VALUE;
    if (args.some((v) => v.class === "blob")) return notAvailable(`${construct}, replace() in a blob`);
    const [x, from, to] = args.map((v) => asText(v, construct)) as [Value, Value, Value];
    return text(`${dialect().fn("replace")}(${dialect().binary(x.sql)}, ${from.sql}, ${to.sql})`);
  },

  coalesce: (args) => firstNotNull(args),
  ifnull: (args) => firstNotNull(args),

  nullif([a, b], construct) {
    if (isNull(a!)) return NULL_VALUE;
    if (a!.class === "mixed") return notAvailable(`${construct}, nullif() of coalesce() of values of different kinds`, "coalesce values of one kind");
    if (isNull(b!)) return { ...a!, affinity: "none" };
    const equal = compare(a!, "=", b!, construct, { affinity: false });
    if (equal === "false") return { ...a!, affinity: "none" };
    if (equal === "true") return NULL_VALUE;
    const { constant: _, ...value } = a!;
    return { ...value, sql: `(CASE WHEN ${equal} THEN NULL ELSE ${a!.sql} END)`, affinity: "none" };
  },

  date: (args, construct) => dateFunction("date", args, construct),
  time: (args, construct) => dateFunction("time", args, construct),
  datetime: (args, construct) => dateFunction("datetime", args, construct),
  julianday: (args, construct) => dateFunction("julianday", args, construct),
  unixepoch: (args, construct) => dateFunction("unixepoch", args, construct),

  strftime([format, ...rest], construct) {
    if (isNull(format!)) return NULL_VALUE;
    if (format!.constant?.kind !== "text") return notAvailable(`${construct}, strftime() with a format that is not a literal`);
    const t = temporal(rest, construct, "strftime");
    if (t === null) return NULL_VALUE;
    const at = asTimestamp(t);
    const pieces: string[] = [];
    const spec = [...format!.constant.value];
    let literal = "";
    const flush = () => {
      if (literal !== "") pieces.push(textLiteral(literal));
      literal = "";
    };
    for (let i = 0; i < spec.length; i++) {
      if (spec[i] !== "%") {
        literal += spec[i];
        continue;
      }
      const code = spec[++i];
      const picture = code === undefined ? undefined : Object.hasOwn(STRFTIME, code) ? STRFTIME[code] : undefined;
      if (picture === undefined) return notAvailable(`strftime('%${code ?? ""}') (${construct})`, `only ${Object.keys(STRFTIME).map((c) => `%${c}`).join(" ")} are`);
      if (picture === "%") literal += "%";
      else {
        flush();
        pieces.push(dialect().formatTimestamp(at, picture));
      }
    }
    flush();
    // NULL for a NULL date, as the pieces that are literals alone would not be.
    const sql = pieces.length === 0 ? "''::text" : pieces.join(" || ");
    // Digits joined by '-', ':', '/' or letters never read as one number ('2024-01'); '%Y' alone does.
    const literals = spec.join("").replace(/%./g, "0");
    const neverNumeric = /[^0-9.eE+\- \t\n\v\f\r]/.test(literals) || (/[0-9]-/.test(literals) && !/[eE]/.test(literals));
    return { ...text(`(CASE WHEN ${at} IS NULL THEN NULL ELSE ${sql} END)`), neverNumeric };
  },
};

/** strftime() specifiers and their to_char() pictures: digits only, so no locale or setting shows. */
const STRFTIME: Record<string, string> = { Y: "YYYY", m: "MM", d: "DD", H: "HH24", M: "MI", S: "SS", "%": "%" };

function caseFolded(x: Value, construct: string, name: "lower" | "upper", fold: (s: string) => string): Value {
  if (isNull(x)) return NULL_VALUE;
  const t = asText(x, construct);
  if (t.constant?.kind === "text") return constantValue({ kind: "text", value: fold(t.constant.value) });
  return text(dialect().asciiCase(name, t.sql));
}

/** func.c substrFunc with literal start and length: characters of text, bytes of a blob. */
function substring([x, start, length]: Value[], construct: string): Value {
  if (isNull(start!) || (length !== undefined && isNull(length))) return NULL_VALUE;
  if (isNull(x!)) return NULL_VALUE;
  const literal = (v: Value): number => {
    const n = constantNumber(boolAsInt(v));
    if (n === undefined) return notAvailable(`${construct}, substr() with a start or length that is not a literal`);
    const whole = typeof n === "number" ? doubleToInt64(n) : n;
    if (whole > 2n ** 31n - 1n || whole < -(2n ** 31n)) return notAvailable(`${construct}, substr() with ${whole}`);
    return Number(whole);
  };
  if (x!.class === "blob" && !dialect().blobPositions) return notAvailable(`${construct}, substr() of a blob`);
  const subject = x!.class === "blob" ? x! : asText(x!, construct);
  let p1 = literal(start!);
  // Without a length: SQLite's maximum string length (SQLITE_LIMIT_LENGTH), longer than any value.
  let p2 = length === undefined ? 1_000_000_000 : literal(length);
  let negative = false;
  if (p2 < 0) {
    p2 = -p2;
    negative = true;
  }
  // SQLite holds no longer value; beyond it, PostgreSQL's int4 arithmetic below could overflow.
  if (p2 > 1_000_000_000) return notAvailable(`${construct}, substr() with a length beyond 1000000000`);
  const kind = subject.class === "blob" ? "blob" : "text";
  const result = (sql: string): Value => ({ sql, class: kind, affinity: "none" });
  if (p1 < 0) {
    // From the end: depends on the value's length.
    const len = `${dialect().fn("length")}(${subject.sql})`;
    if (!negative) return result(dialect().substr(subject.sql, `${len} + (${p1 + 1})`, `${p2}`));
    return result(dialect().substr(subject.sql, `GREATEST(${len} + (${p1}), 0) - ${p2} + 1`, `${p2}`));
  }
  if (p1 > 0) p1--;
  else if (p2 > 0) p2--;
  if (negative) {
    p1 -= p2;
    if (p1 < 0) {
      p2 += p1;
      p1 = 0;
    }
  }
  return result(dialect().substr(subject.sql, `${p1 + 1}`, `${p2}`));
}

function trimmed(name: "btrim" | "ltrim" | "rtrim", [x, characters]: Value[], construct: string): Value {
  if (isNull(x!) || (characters !== undefined && isNull(characters))) return NULL_VALUE;
  if (x!.class === "blob" || characters?.class === "blob") return notAvailable(`${construct}, trimming a blob`);
  const t = asText(x!, construct);
  const fn = dialect().fn(name);
  return text(characters === undefined ? `${fn}(${t.sql})` : `${fn}(${t.sql}, ${asText(characters, construct).sql})`);
}

/**
 * coalesce()/ifnull(): the first argument that is not NULL, which in SQLite keeps its own kind.
 * Of one kind, PostgreSQL's COALESCE. Small INTEGER literals among REAL values (coalesce(price, 0))
 * make a `num`: a double, exact on both kinds of rows. Other mixtures make a `mixed` value, which
 * comparisons and conditions read choice by choice, and nothing else may (values.ts).
 */
function firstNotNull(args: Value[]): Value {
  const present: Value[] = [];
  for (const arg of args) {
    if (isNull(arg)) continue;
    present.push(arg);
    if (arg.constant !== undefined) break; // never NULL: later arguments are never read
  }
  if (present.length === 0) return NULL_VALUE;
  if (present.length === 1) return { ...present[0]!, affinity: "none" };
  const values = present.map(boolAsInt);
  const classes = new Set(values.map((v) => v.class));
  const sql = (parts: string[]) => `COALESCE(${parts.join(", ")})`;
  if (classes.size === 1) {
    const only = values[0]!.class;
    if (only === "int") return { sql: sql(values.map(asInt8)), class: "int", affinity: "none" };
    if (only === "blob" || only === "real" || only === "date" || only === "numeric" || only === "timestamptz" || only === "timestamp") {
      return { sql: sql(values.map((v) => v.sql)), class: only, affinity: "none" };
    }
  }
  const textual = ["text", "date", "timestamptz", "timestamp"];
  if ([...classes].every((c) => textual.includes(c))) {
    return { ...text(sql(values.map((v) => textForm(v).sql))), neverNumeric: values.every((v) => textForm(v).neverNumeric === true || (v.constant?.kind === "text" && numberFromText(v.constant.value) === null)) };
  }
  if ([...classes].every((c) => c === "int" || c === "real" || c === "num")) {
    const integers = values.filter((v) => v.class === "int").map((v) => constantNumber(v));
    if (integers.every((k) => typeof k === "bigint" && k >= -(2n ** 26n) && k <= 2n ** 26n)) {
      const bound = values.reduce((most, v) => {
        const k = v.class === "num" ? (v.bound ?? 0n) : v.class === "int" ? (constantNumber(v) as bigint) : 0n;
        const magnitude = k < 0n ? -k : k;
        return magnitude > most ? magnitude : most;
      }, 0n);
      return { sql: sql(values.map(asFloat8)), class: "num", affinity: "none", bound };
    }
  }
  // Several kinds: a value only comparisons and conditions read, choice by choice (values.ts).
  const choices = values.map((v) => ({ ...v, affinity: "none" as const }));
  return { sql: `(CASE WHEN ${values.map((v) => `${v.sql} IS NOT NULL`).join(" OR ")} THEN 1 END)`, class: "mixed", affinity: "none", choices };
}

/**
 * The one date argument of a date function: a date or timestamp column, or a literal in canonical
 * form. Null when it is the NULL literal. Anything else (modifiers, 'now', other text, numbers) is
 * read by SQLite's own date parser: refused.
 */
function temporal(args: Value[], construct: string, name: string): Value | null {
  if (args.length !== 1) {
    return notAvailable(`${construct}, ${name}() ${args.length === 0 ? "without a date (the current time)" : "with modifiers"}`, "pass one date or timestamp column");
  }
  const [v] = args as [Value];
  if (isNull(v)) return null;
  if (v.class === "date" || v.class === "timestamptz" || v.class === "timestamp") {
    return v.class === "timestamptz" ? { ...v, sql: `(${v.sql} AT TIME ZONE 'UTC')`, class: "timestamp" } : v;
  }
  if (v.constant?.kind === "text") {
    const literal = v.constant.value;
    const day = canonicalDate(literal.slice(0, 10));
    if (day !== null && literal.length === 10) return { sql: `'${day}'::date`, class: "date", affinity: "none" };
    const time = /^ ([0-9]{2}):([0-9]{2}):([0-9]{2})$/.exec(literal.slice(10));
    if (day !== null && time !== null && Number(time[1]) <= 23 && Number(time[2]) <= 59 && Number(time[3]) <= 59) {
      return { sql: `'${literal}'::timestamp`, class: "timestamp", affinity: "none" };
    }
  }
  return notAvailable(`${construct}, ${name}() of ${v.constant?.kind === "text" ? "text other than 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'" : "a value that is not a date or timestamp column"}`);
}

/** A date as the timestamp of its midnight (explicitly: to_char would otherwise take it as a timestamptz in the session's zone). */
const asTimestamp = (t: Value) => (t.class === "date" ? `(${t.sql})::timestamp` : t.sql);

function dateFunction(name: "date" | "time" | "datetime" | "julianday" | "unixepoch", args: Value[], construct: string): Value {
  const t = temporal(args, construct, name);
  if (t === null) return NULL_VALUE;
  // A timestamp's seconds are truncated, as SQLite shows them (date.c).
  const at = asTimestamp(t);
  switch (name) {
    case "date":
      return { ...text(dialect().formatTimestamp(at, "YYYY-MM-DD")), neverNumeric: true };
    case "time":
      return { ...text(dialect().formatTimestamp(at, "HH24:MI:SS")), neverNumeric: true };
    case "datetime":
      return { ...text(dialect().formatTimestamp(at, "YYYY-MM-DD HH24:MI:SS")), neverNumeric: true };
    case "julianday":
      // Days and half a day are exact doubles; SQLite's fractions of a day are its own rounding.
      if (t.class !== "date") return notAvailable(`${construct}, julianday() of a timestamp`, "compare the timestamp itself, or use unixepoch()");
      return { sql: `((${t.sql} - '1970-01-01'::date)::float8 + '2440587.5'::float8)`, class: "real", affinity: "none" };
    case "unixepoch":
      if (t.class === "date") return { sql: `((${t.sql} - '1970-01-01'::date)::int8 * 86400)`, class: "int", affinity: "none" };
      return { sql: `(${dialect().fn("floor")}(EXTRACT(EPOCH FROM ${t.sql})))::int8`, class: "int", affinity: "none" };
  }
}
