/**
 * The Simplified SQL allow-list (ARCHITECTURE.md §4) as plain data. dialect.ts and expression.ts walk the
 * sql-parser-cst tree and accept a node only if its type is listed for the position it is in;
 * everything else, including node types this file has never heard of, is rejected.
 */

/** Node types permitted at each position of `SELECT columns FROM table [WHERE] [ORDER BY] [LIMIT]`. */
export const ALLOWED_NODES = {
  /** Program level: the one SELECT; `empty` is what a trailing ';' leaves behind. */
  statement: ["select_stmt", "empty"],
  /** Clauses of the SELECT, in the only order sql-parser-cst produces them. */
  clause: ["select_clause", "from_clause", "where_clause", "order_by_clause", "limit_clause"],
  /** `*` alone, or columns (bare, double-quoted, or `table.column`) each with an optional `AS alias`. */
  selectItem: ["all_columns", "identifier", "member_expr", "alias"],
  /** A configured table, bare or double-quoted: no schema, alias, join, INDEXED BY or function. */
  fromTable: ["identifier"],
  /** A column or alias with optional ASC/DESC and NULLS FIRST/LAST. */
  orderItem: ["identifier", "member_expr", "sort_specification"],
  orderExpr: ["identifier", "member_expr"],
  sortDirection: ["sort_direction_asc", "sort_direction_desc"],
  /** LIMIT and OFFSET take non-negative integer literals only (checked further in dialect.ts). */
  limitValue: ["number_literal"],
  /** WHERE and function/CAST arguments. Unary `+` is accepted too: it is a no-op in SQLite. */
  expression: [
    "identifier", "member_expr", "paren_expr", "prefix_op_expr", "binary_expr", "between_expr",
    "func_call", "cast_expr",
    "number_literal", "string_literal", "blob_literal", "boolean_literal", "null_literal",
  ],
  literal: ["number_literal", "string_literal", "blob_literal", "boolean_literal", "null_literal"],
  /** `x [NOT] LIKE pattern ESCAPE '<char>'`. */
  escape: ["string_literal"],
  castType: ["data_type_name"],
} as const;

/** Identifiers may be bare or double-quoted (standard SQL); not `backticks`, [brackets] or 'quotes'. */
export const IDENTIFIER_QUOTES = ['"'] as const;

/** Operators by their keyword/symbol text, multi-word ones joined by one space. */
export const PREFIX_OPERATORS = ["-", "+", "NOT"] as const;
export const BINARY_OPERATORS = [
  "AND", "OR",
  "=", "==", "!=", "<>", "<", "<=", ">", ">=",
  "+", "-", "*", "/", "%", "||",
  "IS", "IS NOT", "LIKE", "NOT LIKE", "GLOB", "NOT GLOB", "IN", "NOT IN",
] as const;
export const BETWEEN_OPERATORS = ["BETWEEN", "NOT BETWEEN"] as const;
/** Operators whose right side may be `pattern ESCAPE literal`. */
export const ESCAPABLE_OPERATORS = ["LIKE", "NOT LIKE"] as const;
/** Operators whose right side is a parenthesised list of literals. */
export const LIST_OPERATORS = ["IN", "NOT IN"] as const;

/** Scalar functions (ARCHITECTURE.md §4) with their SQLite argument counts; `max: null` = no upper bound. */
export const FUNCTIONS: Record<string, { min: number; max: number | null }> = {
  abs: { min: 1, max: 1 },
  round: { min: 1, max: 2 },
  lower: { min: 1, max: 1 },
  upper: { min: 1, max: 1 },
  length: { min: 1, max: 1 },
  substr: { min: 2, max: 3 },
  substring: { min: 2, max: 3 },
  trim: { min: 1, max: 2 },
  ltrim: { min: 1, max: 2 },
  rtrim: { min: 1, max: 2 },
  instr: { min: 2, max: 2 },
  replace: { min: 3, max: 3 },
  coalesce: { min: 2, max: null },
  ifnull: { min: 2, max: 2 },
  nullif: { min: 2, max: 2 },
  date: { min: 0, max: null },
  time: { min: 0, max: null },
  datetime: { min: 0, max: null },
  julianday: { min: 0, max: null },
  unixepoch: { min: 0, max: null },
  strftime: { min: 1, max: null },
};

/**
 * Functions whose value can change with the clock alone (`'now'`, or no time argument): a WHERE
 * calling one is answered afresh every time, never from a kept result or count (result-cache.ts).
 */
export const CLOCK_FUNCTIONS = ["date", "time", "datetime", "julianday", "unixepoch", "strftime"] as const;

/** CAST target types: plain names with a clear SQLite affinity (DATE etc. would silently mean NUMERIC). */
export const CAST_TYPES = ["INTEGER", "INT", "REAL", "TEXT", "BLOB", "NUMERIC"] as const;

/**
 * Not allowed, named only so that the message says "aggregate" or "window" rather than "not allowed".
 * Multi-argument min()/max() are scalar in SQLite but are refused here as aggregates too.
 */
export const AGGREGATE_FUNCTIONS = [
  "count", "sum", "avg", "min", "max", "total", "group_concat", "string_agg",
  "json_group_array", "json_group_object", "jsonb_group_array", "jsonb_group_object",
  "median", "percentile", "percentile_cont", "percentile_disc",
] as const;
export const WINDOW_FUNCTIONS = [
  "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
  "lag", "lead", "first_value", "last_value", "nth_value",
] as const;

/** Size limits of ARCHITECTURE.md §4; precheck.ts and growth.ts say how each was measured. */
export const LIMITS = {
  /** Levels of operators, parentheses, function calls and CASTs in one expression. */
  maxExpressionDepth: 64,
  maxInListItems: 1000,
  /** Commas outside quotes, checked before parsing: room for the largest IN list plus a wide select list. */
  maxListSeparators: 1500,
  /**
   * Times one column may be named in the select list. Each name reads the value again: a 1 MB text
   * named 1,380 times under aliases made a 1.38 GB row from a 16 KB query, read whole before any
   * size limit could stop it. SQLite stores text in a column of any declared type, so only columns
   * that can hold nothing but numbers (8 bytes; catalog.ts `numbersOnly`) may be named more often.
   */
  maxColumnNames: 4,
  /**
   * The parser's work beyond one reading of each token, from constructs it reads several times
   * ('((', LIKE patterns, IN lists, subqueries; estimated by precheck.ts before parsing). Within
   * it, the worst of 150,000 generated nests parsed in under 100 ms; a 1000-item IN list uses ~2000.
   */
  maxParserRework: 5000,
  /** A query that is still being validated after this long is refused (and its validator replaced). */
  validationTimeoutMs: 1000,
  /**
   * The longest string or blob a WHERE expression can build from literals alone (replace() and ||
   * over literals, growth.ts), in bytes. SQLite's own limit is 1e9, and building strings near it
   * takes gigabytes.
   */
  maxBuiltStringBytes: 1_000_000,
  /**
   * How many times longer than the stored values it reads a WHERE expression can make a string
   * (replace() multiplies, || adds; growth.ts).
   */
  maxStringGrowth: 1024,
  /**
   * Bytes instr(), replace(), LIKE and GLOB may compare for one row, from literals alone (growth.ts):
   * ~10 ms of SQLite's work. A row's evaluation cannot be stopped midway, on the HTTP thread's
   * budgeted tries nor in a worker told to stop.
   */
  maxRowWork: 10_000_000,
  /**
   * The longest LIKE or GLOB pattern: SQLite's SQLITE_LIMIT_LIKE_PATTERN_LENGTH, past which the
   * query fails ("LIKE or GLOB pattern too complex") as soon as a row reaches it (growth.ts).
   */
  maxLikePatternBytes: 50_000,
  /** The same for each byte of the longest value stored (a 1 MB literal searched in a column: refused). */
  maxRowWorkPerValueByte: 100_000,
  /** The same for the square of that length (a column searched in a column: 1). */
  maxRowWorkSquared: 16,
} as const;
