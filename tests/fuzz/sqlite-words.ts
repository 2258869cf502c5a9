/**
 * Words of SQLite the SQL generator draws from: every keyword of SQLite's grammar
 * (https://sqlite.org/lang_keywords.html, 147 words), functions beyond the dialect's allow-list,
 * type names, date modifiers and strftime conversions.
 */

export const SQLITE_KEYWORDS = `ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT BEFORE BEGIN
BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE
CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END
ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP
GROUPS HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY
LAST LEFT LIKE LIMIT MATCH MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS OUTER
OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME
REPLACE RESTRICT RETURNING RIGHT ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION
TRIGGER UNBOUNDED UNION UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT`.split(/\s+/);

/** The dialect's functions with SQLite's argument counts (`max: null`: any number). */
export const ALLOWED_FUNCTIONS: Record<string, { min: number; max: number | null }> = {
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

/** SQLite functions the dialect does not allow (aggregates, windows, side effects, introspection). */
export const OTHER_FUNCTIONS = [
  "count", "sum", "avg", "min", "max", "total", "group_concat", "string_agg", "row_number", "rank", "lag", "ntile",
  "random", "randomblob", "zeroblob", "hex", "unhex", "printf", "format", "char", "quote", "typeof", "iif", "like",
  "glob", "likely", "likelihood", "sqlite_version", "load_extension", "readfile", "writefile", "json", "json_extract",
  "json_each", "changes", "last_insert_rowid", "soundex", "sqlite_compileoption_get", "pragma_table_info", "fts3",
  "instr_", "ABS", "Lower", "upper ", "concat", "concat_ws", "octet_length", "sign", "pi", "exp", "ln", "timediff",
];

export const CAST_TYPES = ["INTEGER", "INT", "REAL", "TEXT", "BLOB", "NUMERIC"];
export const ODD_CAST_TYPES = [
  "DATE", "VARCHAR(10)", "DECIMAL(10,5)", "BOOLEAN", "ANY", "UNSIGNED BIG INT", "DOUBLE PRECISION", "", "integer", "Text",
  "NONE", "INTEGER PRIMARY KEY", "\"INTEGER\"", "'TEXT'", "BLOB(99999999999999999999)", "FLOAT8", "JSON",
];

export const DATE_MODIFIERS = [
  "now", "unixepoch", "julianday", "auto", "localtime", "utc", "subsec", "subsecond", "start of month",
  "start of year", "start of day", "weekday 0", "weekday 7", "+1 day", "-1 month", "+9999999999 years", "-0.5 seconds",
  "+01:30", "-24:00:00.000", "ceiling", "floor", "2024-02-30", "0000-00-00", "9999-12-31 23:59:59.999", "1e999",
  "+NaN days", "", " ", "%",
];

export const STRFTIME_FORMATS = [
  "%Y-%m-%d", "%H:%M:%f", "%s", "%J", "%j", "%W", "%w", "%u", "%G", "%g", "%V", "%e", "%k", "%l", "%p", "%P", "%R",
  "%T", "%F", "%D", "%%", "%", "%Q", "%Y%", "%4Y", "%-d", "%E", "", "%f%f%f%f", "% ", "%\u0000", "%é",
];
