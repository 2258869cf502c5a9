/**
 * One table in both engines for the differential test (DESIGN.md §14): PostgreSQL's typed columns,
 * and SQLite's with the declared types whose Arrow types match (src/engines/postgres/columns.ts
 * says which SQLite column each stands for), holding the same rows: NULLs, negatives, mixed-case
 * ASCII and non-ASCII text, empty strings, % and _ and \ in text, integers past 2^53, ties,
 * dates before year 1000, timestamps with fractions of a second up to microseconds.
 */

export interface Column {
  name: string;
  postgres: string;
  sqlite: string;
}

/** The fixture's swaps columns (tests/sql/fixture.ts, so the accepted corpus runs), then one of each other type. */
export const COLUMNS: Column[] = [
  { name: "id", postgres: "bigint", sqlite: "INTEGER PRIMARY KEY" },
  { name: "pair", postgres: "text", sqlite: "TEXT" },
  { name: "price", postgres: "double precision", sqlite: "REAL" },
  { name: "volume", postgres: "bigint", sqlite: "INTEGER" },
  { name: "active", postgres: "boolean", sqlite: "BOOLEAN" },
  { name: "trade_date", postgres: "date", sqlite: "DATE" },
  { name: "created_at", postgres: "timestamp with time zone", sqlite: "DATETIME" },
  { name: "payload", postgres: "bytea", sqlite: "BLOB" },
  { name: "note", postgres: "text", sqlite: "TEXT" },
  { name: "order", postgres: "text", sqlite: "TEXT" },
  { name: "Fee Rate", postgres: "numeric", sqlite: "NUMERIC" },
  { name: "qty", postgres: "integer", sqlite: "INTEGER" },
  { name: "ratio", postgres: "real", sqlite: "REAL" },
  { name: "label", postgres: "character varying(12)", sqlite: "VARCHAR(12)" },
  { name: "code", postgres: "uuid", sqlite: "TEXT" },
  { name: "seen_at", postgres: "timestamp without time zone", sqlite: "TIMESTAMP" },
];

/**
 * A row: bigint for integers, number for doubles, string for text, dates ('YYYY-MM-DD'),
 * timestamps ('YYYY-MM-DD HH:MM:SS[.ffffff]', UTC, no trailing zeros: the text SQLite holds) and
 * numerics (decimal text), hex for bytea, boolean, or null.
 */
type Cell = bigint | number | string | boolean | { hex: string } | null;

const x = (hex: string) => ({ hex });

// id, pair, price, volume, active, trade_date, created_at, payload, note, order, Fee Rate, qty, ratio, label, code, seen_at
export const ROWS: Cell[][] = [
  [1n, "ETH/USDC", 101.5, 10n, true, "2024-01-01", "2024-01-01 10:00:00", x("0102"), "x", "first", "0.003", 3, 0.5, "abc", "00000000-0000-0000-0000-000000000001", "2024-01-01 10:00:00"],
  [2n, "BTC/USDC", 42000.25, 2n, false, "2024-01-02", "2024-01-02 13:30:00", null, "50% off", "second", "0.001", -2, 0.25, "ABC", "00000000-0000-0000-0000-000000000002", "2024-01-02 13:30:00.5"],
  [3n, "ETH/DAI", null, 20n, true, "2024-01-03", "2024-01-03 23:59:59", x(""), " y", null, null, null, null, null, null, null],
  [4n, "SOL/USDC", 9.75, null, null, null, null, null, null, "fourth", "0.002", 0, -1.5, "é", "ffffffff-ffff-ffff-ffff-ffffffffffff", null],
  [5n, "ETH/USDC", 99.5, -5n, false, "2023-12-31", "2023-12-31 00:00:00", x("ff"), "café", "fifth", "0", 7, 0.1, "Abc", "12345678-9abc-def0-1234-56789abcdef0", "2023-12-31 00:00:00"],
  [6n, "it's", 0, 0n, true, "2024-02-29", "2024-02-29 12:00:01", null, "z ", "sixth", "0.5", 100, 2, "", "00000000-0000-0000-0000-000000000006", "2024-02-29 12:00:01"],
  [7n, "BTC/USDC", 43000, 1n, true, "2024-03-01", "2024-03-01 08:00:00", x("0102"), "10", "seventh", "0.004", 5, 3.75, "a_c", "00000000-0000-0000-0000-000000000007", "2024-03-01 08:00:00"],
  [8n, "DOGE/DAI", 0.08, 1000n, false, "2024-03-02", "2024-03-02 09:15:00", null, null, null, null, null, null, null, null, null],
  [9n, "eth/usdc", -1.5, -7n, true, "0999-12-31", "2024-01-03 00:00:00", x("00"), "", "", "-0.25", -100, -0.5, "a%c", "00000000-0000-0000-0000-000000000009", "0999-12-31 23:59:59"],
  [10n, "ÉTH/Usdc", 2.5, 9007199254740993n, true, "2024-01-02", "2024-01-02 23:59:59.9996", x("61"), "ÉCLAIR", "Éclair", "12", 2147483647, 1e10, "ÀÉ", "00000000-0000-0000-0000-00000000000a", "2024-01-02 23:59:59.9996"],
  [11n, "straße", -2.5, 9007199254740992n, false, "9999-12-31", "1969-12-31 23:59:59.5", x("6162"), "STRASSE", "Straße", "1.50", -2147483648, 1e-10, "ß", "00000000-0000-0000-0000-00000000000b", "1969-12-31 23:59:59.5"],
  [12n, "中文/DAI", 0.49999999999999994, -9007199254740993n, null, "1970-01-01", "1970-01-01 00:00:00.123456", x("e4b8ad"), "中", "中文", "123456.789", 42, 0.125, "中", null, "1970-01-01 00:00:00.123456"],
  [13n, "😀/USDC", 4503599627370497, 4611686018427387904n, true, "2000-02-29", "2000-02-29 00:00:00.000001", x("f09f9880"), "😀", "🙂", "0.1", 1, 100.25, "😀", "00000000-0000-0000-0000-00000000000d", "2000-02-29 00:00:00.000001"],
  [14n, "a%b", 1e-300, 3n, false, "2024-01-10", "2024-01-10 10:10:10.1", x("25"), "100%", "a%b", "-12.5", 3, 0.75, "%", "00000000-0000-0000-0000-00000000000e", null],
  [15n, "a_b", 1e15, -3n, true, "2024-01-11", "2024-01-11 11:11:11.11", x("5f"), "a_b", "a_b", "7", 30, -0.25, "_", "00000000-0000-0000-0000-00000000000f", "2024-01-11 11:11:11.11"],
  [16n, "x\\y", -0.1, 100n, true, "2024-12-25", "2024-12-25 18:00:00", x("5c"), "back\\slash", "x\\y", "100", -1, 1.5, "\\", "00000000-0000-0000-0000-000000000010", "2024-12-25 18:00:00"],
  [17n, "MiXeD Case", 1234.5678, 42n, false, "2024-06-15", "2024-06-15 06:15:00", x("4d"), "MiXeD", "mixed", "0.0001", 12, 12.5, "MiXeD", "00000000-0000-0000-0000-000000000011", "2024-06-15 06:15:00"],
  [18n, " padded ", 100, 100n, true, "2024-06-16", "2024-06-16 00:00:00", x("20"), "  two  ", "  ", "100.25", 8, 8, " p ", "00000000-0000-0000-0000-000000000012", "2024-06-16 00:00:00"],
  [19n, "ETH/USDC", 101.5, 10n, true, "2024-01-01", "2024-01-01 10:00:00", x("0102"), "x", "tie", "0.003", 3, 0.5, "abc", "00000000-0000-0000-0000-000000000013", "2024-01-01 10:00:00"],
  [20n, "[x]*?", 7, 7n, false, "2024-07-07", "2024-07-07 07:07:07", x("5b5d"), "*", "?", "7.07", 7, 7, "[", "00000000-0000-0000-0000-000000000014", "2024-07-07 07:07:07"],
];

const sqlText = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** PostgreSQL statements creating and filling the table `schema`.`swaps`. */
export function postgresSetup(schema: string): string[] {
  const table = `"${schema}"."swaps"`;
  const create = `CREATE TABLE ${table} (${COLUMNS.map((c) => `"${c.name}" ${c.postgres}${c.name === "pair" ? " NOT NULL" : ""}`).join(", ")})`;
  const literal = (cell: Cell, column: Column): string => {
    if (cell === null) return "NULL";
    if (typeof cell === "object") return `'\\x${cell.hex}'::bytea`;
    if (typeof cell === "boolean") return cell ? "true" : "false";
    if (column.postgres === "timestamp with time zone") return `${sqlText(`${cell}+00`)}::timestamptz`;
    if (typeof cell === "string") return `${sqlText(cell)}::${column.postgres}`;
    if (typeof cell === "number") return `'${cell}'::${column.postgres}`;
    return `${cell}::${column.postgres}`;
  };
  const values = ROWS.map((row) => `(${row.map((cell, i) => literal(cell, COLUMNS[i]!)).join(", ")})`);
  return [`CREATE SCHEMA "${schema}"`, create, `INSERT INTO ${table} VALUES ${values.join(", ")}`];
}

export const SQLITE_CREATE = `CREATE TABLE swaps (${COLUMNS.map((c) => `"${c.name}" ${c.sqlite}${c.name === "pair" ? " NOT NULL" : ""}`).join(", ")})`;

/** The rows as SQLite parameters: booleans 1/0, blobs as bytes, numbers and text as they are (affinity converts NUMERIC text). */
export function sqliteRows(): (bigint | number | string | Uint8Array | null)[][] {
  return ROWS.map((row) =>
    row.map((cell, i) => {
      if (cell === null) return null;
      if (typeof cell === "boolean") return cell ? 1 : 0;
      if (typeof cell === "object") return Uint8Array.from(Buffer.from(cell.hex, "hex"));
      // A float4 column holds the float4 nearest the value: SQLite the double of that float.
      if (COLUMNS[i]!.postgres === "real" && typeof cell === "number") return Math.fround(cell);
      if (typeof cell === "number" && Number.isInteger(cell) && COLUMNS[i]!.sqlite === "INTEGER") return BigInt(cell);
      return cell;
    }),
  );
}
