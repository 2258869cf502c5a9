/**
 * Queries that would make a failure an oracle on a table whose quotes tell nothing (DESIGN.md §17):
 * - probes: a WHERE that targets one row (`id = 7`) and holds a construct that fails on some values
 *   and not others (abs() of what may be -2^63, LIKE/GLOB patterns read from the table), or selects
 *   a column whose value does not fit its type on that row, or runs past the time limit; built as
 *   a template, so the same probe is sent for a trap row and an ordinary one;
 * - OFFSET probes: `LIMIT n OFFSET k` (or `LIMIT k, n`) with n on both sides of max_rows;
 * - journal queries: reads of a case's own rows of `journal`, for replays after writes.
 */
import type { Random } from "./random.ts";
import { JOURNAL_ROWS, TRAP_ROWS, VAULT_COLUMNS, VAULT_ROWS } from "./sealed-tables.ts";

export interface Probe {
  table: "vault" | "vault_by_limit" | "slow_vault";
  /** What the probe is, for the summary (e.g. "abs", "pattern", "misfit", "time"). */
  shape: string;
  /** The SQL with the targeted row `row`. */
  sql(row: number): string;
  /** The text that names the row in the SQL (answers are compared with it masked). */
  selector(row: number): string;
  /** Two rows the pair targets: a trap row and an ordinary one (in either order). */
  rows: [number, number];
}

/** Integer expressions whose abs() may overflow on -2^63, and some that cannot (SQLite folds `-` into a literal). */
const ABS_ARGUMENTS = [
  "n", "k", "id", "d", "ok", "r", "s", "vault.n", '"n"', "(n)", "+n", "-n", "- -n", "n + 0", "n - 1", "n * 1", "n / 1", "n % 7", "0 + n",
  "coalesce(n, 0)", "ifnull(k, n)", "nullif(n, 1)", "coalesce(s, n)", "CAST(n AS INTEGER)", "CAST(s AS INTEGER)", "CAST(n AS NUMERIC)",
  "CAST(n AS REAL)", "CAST(n AS TEXT)", "CAST(s AS REAL)", "round(n)", "round(n, 0)", "length(s)", "instr(s, 'x')", "substr(n, 1)",
  "unixepoch(n, 'unixepoch')", "julianday(d)", "strftime('%s', d)", "upper(n)", "abs(n)",
  "-9223372036854775808", "- 9223372036854775808", "-(9223372036854775808)", "(-9223372036854775808)", "0x8000000000000000",
  "-0x8000000000000000", "-0x7fffffffffffffff - 1", "-9223372036854775807 - 1", "9223372036854775807", "-9223372036854775807",
  "'-9223372036854775808'", "+'-9223372036854775808'", "-'9223372036854775808'", "CAST('-9223372036854775808' AS INTEGER)", "1e19", "-1e19",
] as const;

const ABS_TESTS = ["abs(%) > 0", "abs(%) IS NOT NULL", "abs(%) = abs(%)", "abs(%) < 10", "NOT abs(%) = 1", "abs(%) BETWEEN 0 AND 5", "abs(%) IN (1, 2, 3)"] as const;

/** Sides of LIKE/GLOB: read from the table (refused on these tables), or literals. */
const PATTERNS = [
  "s", "'%' || s", "s || '%'", "upper(s)", "lower(s)", "replace(s, 'x', 'y')", "substr(s, 1, 60000)", "coalesce(s, 'a')", "trim(s)", "s || s",
  "CAST(n AS TEXT)", "vault.s", "ifnull(s, '')", "'v%'", "'%x%'", "'*'", "'v1_'", "'%'", "'[a-z]*'",
] as const;
const PATTERN_SUBJECTS = ["'x'", "s", "'v1'", "lower(s)", "'*'", "CAST(id AS TEXT)", "d"] as const;
const PATTERN_OPERATORS = ["LIKE", "NOT LIKE", "GLOB", "NOT GLOB"] as const;

/** WHEREs that fail on no value, but read the traps (comparisons of raw values, lengths). */
const PLAIN = ["d = '2024-01-02'", "date(d) IS NULL", "k > 3", "ok = 1", "length(s) > 50000", "n < 0", "n = -9223372036854775808", "typeof(k) = 'text'", "s IS NULL"] as const;

/** Ways to name one row; `%` is its id. */
const SELECTORS = ["id = %", "id IN (%)", "id BETWEEN % AND %", "id >= % AND id <= %", "% = id", "vault.id = %", "id = % + 0"] as const;

const TIME_FORMAT = "%Y-%m-%dT%H:%M:%f";

function fill(template: string, value: string): string {
  return template.replaceAll("%", value);
}

function selectList(rng: Random, table: string): string {
  if (rng.chance(0.15)) return "*";
  const columns = rng.shuffle([...VAULT_COLUMNS]).slice(0, rng.int(1, 4));
  return columns.map((column) => (table === "vault" && rng.chance(0.1) ? `vault.${column}` : column)).join(", ");
}

/** A shape that can fail, or cannot, on the vault tables. */
function condition(rng: Random): { shape: string; text: string } {
  return rng.weighted<() => { shape: string; text: string }>([
    [5, () => ({ shape: "abs", text: fill(rng.pick(ABS_TESTS), rng.pick(ABS_ARGUMENTS)) })],
    [
      4,
      () => {
        const operator = rng.pick(PATTERN_OPERATORS);
        const escape = operator.endsWith("LIKE") && rng.chance(0.2) ? " ESCAPE '\\'" : "";
        return { shape: "pattern", text: `${rng.pick(PATTERN_SUBJECTS)} ${operator} ${rng.pick(PATTERNS)}${escape}` };
      },
    ],
    [1, () => ({ shape: "long-literal-pattern", text: `s LIKE replace('${"a".repeat(300)}', 'a', '${"b".repeat(rng.int(150, 200))}')` })],
    [3, () => ({ shape: "plain", text: rng.pick(PLAIN) })],
  ])();
}

/** A probe of one of the vault tables, or of the time limit on slow_vault, with a LIMIT within max_rows. */
export function probe(rng: Random, maxRows: number): Probe {
  const trap = rng.pick(TRAP_ROWS);
  let ordinary = rng.int(1, VAULT_ROWS);
  while ((TRAP_ROWS as readonly number[]).includes(ordinary)) ordinary = rng.int(1, VAULT_ROWS);
  const rows: [number, number] = rng.chance(0.5) ? [trap, ordinary] : [ordinary, trap];
  const limit = rng.weighted<() => number>([
    [6, () => rng.int(1, maxRows)],
    [1, () => maxRows],
  ])();

  if (rng.chance(0.1)) {
    // Past the time limit or not, depending on how many rows the WHERE scans (those at or after the row).
    const repeat = rng.int(3, 30);
    const selector = (row: number) => `id >= ${row * 2_500}`;
    return {
      table: "slow_vault",
      shape: "time",
      rows,
      selector,
      sql: (row) => `SELECT id FROM slow_vault WHERE ${selector(row)} AND length(strftime('${TIME_FORMAT.repeat(repeat)}', id)) < 0 LIMIT ${limit}`,
    };
  }

  const table = rng.chance(0.5) ? "vault" : "vault_by_limit";
  let selectorTemplate: string = rng.pick(SELECTORS);
  if (table !== "vault") selectorTemplate = selectorTemplate.replace("vault.id", "id");
  const selector = (row: number) => fill(selectorTemplate, String(row));
  const shapes = [condition(rng)];
  if (rng.chance(0.25)) shapes.push(condition(rng));
  const columns = selectList(rng, table);
  // Selecting a column that holds a misfit on a trap row fails when the value is encoded (after /verify).
  const misfit = /\*|\bd\b|\bk\b|\bok\b/.test(columns);
  const conditions = shapes.map((s) => {
    const text = table === "vault" ? s.text : s.text.replaceAll("vault.", "");
    return rng.chance(0.5) ? `(${text})` : text;
  });
  // The row named first or last, and-ed with the conditions or or-ed (then they are read on every row).
  const form = rng.weighted<(selected: string, rest: string) => string>([
    [4, (selected, rest) => `${selected} AND ${rest}`],
    [2, (selected, rest) => `${rest} AND ${selected}`],
    [1, (selected, rest) => `${selected} OR (${rest})`],
    [1, (selected, rest) => `NOT (${selected}) AND ${rest}`],
  ]);
  const where = (row: number) => form(selector(row), conditions.join(" AND "));
  const from = table === "vault" ? "vault" : "vault_by_limit";
  return {
    table,
    shape: [...shapes.map((s) => s.shape), ...(misfit ? ["misfit"] : [])].join("+"),
    rows,
    selector,
    sql: (row) => `SELECT ${table === "vault" ? columns : columns.replaceAll("vault.", "")} FROM ${from} WHERE ${where(row)} LIMIT ${limit}`,
  };
}

export interface OffsetProbe {
  table: "vault" | "vault_by_limit" | "journal";
  /** The SQL with OFFSET `offset`. */
  sql(offset: number): string;
  limit: number;
  /** Two offsets the pair uses. */
  offsets: [number, number];
  /** How the LIMIT is written. */
  form: string;
}

/** `LIMIT n OFFSET k` on a sealed table, n on either side of max_rows (20); the same probe for two values of k. */
export function offsetProbe(rng: Random, maxRows: number): OffsetProbe {
  const table = rng.pick(["vault", "vault_by_limit", "journal"] as const);
  const limit = rng.weighted<() => number>([
    [3, () => rng.int(0, maxRows)],
    [1, () => maxRows],
    [1, () => maxRows + 1],
    [2, () => rng.int(maxRows + 1, 1_000)],
    [1, () => rng.pick([1_000_000, 2 ** 31, 2 ** 53 - 1])],
  ])();
  const rowCount = table === "journal" ? JOURNAL_ROWS : VAULT_ROWS;
  const offset = () => rng.weighted<() => number>([
    [2, () => rng.int(0, rowCount + 5)],
    [1, () => rng.pick([rowCount - maxRows, rowCount - 1, rowCount, rowCount + 1, 0])],
    [1, () => rng.int(0, 1_000_000)],
  ])();
  const offsets: [number, number] = [offset(), offset()];
  const columns = table === "journal" ? rng.pick(["id", "id, note", "*"]) : rng.pick(["id", "id, n", "id, s", "id, r"]);
  const where = rng.pick(["", "", " WHERE id > 3", " WHERE n < 0", " WHERE id <> 7"]).replace("n < 0", table === "journal" ? "amount > 0" : "n < 0");
  const order = rng.chance(0.3) ? " ORDER BY id DESC" : "";
  const hex = rng.chance(0.1);
  const number = (value: number) => (hex ? `0x${value.toString(16)}` : String(value));
  const form = rng.weighted<string>([
    [4, "LIMIT n OFFSET k"],
    [1, "LIMIT k, n"],
  ]);
  return {
    table,
    limit,
    offsets,
    form: hex ? `${form} (hexadecimal)` : form,
    sql: (k) => `SELECT ${columns} FROM ${table}${where}${order} ${form === "LIMIT k, n" ? `LIMIT ${number(k)}, ${number(limit)}` : `LIMIT ${number(limit)} OFFSET ${number(k)}`}`,
  };
}

/** A read of some of journal's first rows and of the case's own rows (its slot), within max_rows. */
export function journalQuery(rng: Random, slot: number[], maxRows: number): string {
  const base = rng.shuffle(Array.from({ length: JOURNAL_ROWS }, (_, i) => i + 1)).slice(0, rng.int(0, 4));
  const ids = [...base, ...slot].sort((a, b) => a - b);
  const columns = rng.pick(["id, note", "*", "note, amount", "id"]);
  const order = rng.pick(["", "", " ORDER BY id DESC", " ORDER BY amount"]);
  const where = rng.chance(0.5) ? `id IN (${ids.join(", ")})` : `id IN (${base.length > 0 ? base.join(", ") : "0"}) OR id BETWEEN ${slot[0]} AND ${slot.at(-1)}`;
  return `SELECT ${columns} FROM journal WHERE ${where}${order} LIMIT ${rng.int(Math.min(maxRows, base.length + 2), maxRows)}`;
}
