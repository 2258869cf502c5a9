/**
 * Queries for the differential test over differential-data.ts's swaps: written ones aimed at each
 * place where SQLite and PostgreSQL part ways (affinity, exact INTEGER/REAL comparison, LIKE's case
 * folding, GLOB classes, substr's negative positions, round()'s halves, dates and timestamps
 * against literals of every shape), and generated ones built the way buyers write queries (a column,
 * an operator, a literal of the column's kind; functions on fitting columns; AND/OR/NOT).
 */
import { mulberry32 as random } from "../../support/random.ts";

const W = "SELECT id FROM swaps WHERE ";

export const WRITTEN: string[] = [
  // Affinity: a number next to a TEXT column is text; text next to an INTEGER column a number.
  W + "note = 10",
  W + "note > 5",
  W + "volume = '10'",
  W + "volume >= ' 20 '",
  W + "volume = '1e3' OR volume = '2.0'",
  W + "price = '101.5'",
  W + "+note = 10",
  W + "CAST(volume AS TEXT) = '10'",
  W + "CAST(volume AS TEXT) > 5",
  W + "CAST(note AS INTEGER) = 10",
  W + "CAST(price AS INTEGER) = 101",
  W + "CAST(qty AS REAL) / 2 > 1",
  W + "CAST(pair AS BLOB) = X'4554482F55534443'",
  W + "CAST('12' AS NUMERIC) / 5 = volume",
  W + "volume = 'abc'",
  W + "pair = 1",
  W + "payload = 'a'",
  // Exact comparison of INTEGER and REAL past 2^53.
  W + "volume = 9007199254740993",
  W + "volume = 9007199254740992.0",
  W + "volume > 9007199254740992.0",
  W + "volume < 9007199254740993.5",
  W + "volume > 4.611686018427388e18",
  W + "volume >= 4611686018427387904",
  W + "price < 4503599627370497",
  W + "price = 4503599627370497",
  W + "price > volume",
  W + "price <= volume",
  W + "price = volume",
  W + "CAST(volume AS REAL) = volume",
  W + "volume IN (9007199254740992.0, 2.5, 10)",
  W + "volume BETWEEN 1.5 AND 10.5",
  W + "qty > 1e10 OR qty < -1e10 OR qty = 2147483647",
  W + "price < 9007199254740993 AND price > -9007199254740993",
  W + "ratio >= 9007199254740993 OR ratio = 9007199254740993",
  W + "volume < 1e19 AND volume > -1e19",
  W + "volume <= 9223372036854775807.0",
  W + "volume > 9.2e18",
  W + "volume >= 4611686018427387904.5",
  W + "4611686018427387904 = volume",
  W + "2.5 < volume",
  W + "ratio = 0.1",
  W + "ratio > 0.1 AND ratio < 3.75",
  W + "ratio = 2.5e-1",
  // Integer division, remainder, overflow to REAL, division by zero.
  W + "volume / 3 = 3",
  W + "volume / -3 = -1",
  W + "volume % 3 = -2",
  W + "volume % -3 = 1",
  W + "qty / 0 IS NULL",
  W + "price / 0 IS NULL",
  W + "qty % 0 IS NULL",
  W + "price % 2 = 1",
  W + "price % -2.5 = 1",
  W + "volume * 2 > 50",
  W + "qty * 4 = 8589934588",
  W + "qty + 1 > 2147483647",
  W + "price * 2 + volume > 100",
  W + "-price < -100",
  W + "-qty > 0",
  W + "9223372036854775807 + 1 > 0",
  W + "5 / 2 = 2 AND 5.0 / 2 = 2.5 AND -7 / 2 = -3 AND -7 % 3 = -1",
  W + "1 / 0 IS NULL AND 1 % 0 IS NULL AND 1.0 / 0 IS NULL",
  W + "1e308 * 10 > 0",
  W + "active + 1 = 2",
  W + "-active = -1",
  // Booleans and truth.
  W + "active",
  W + "NOT active",
  W + "active = TRUE",
  W + "active = 1",
  W + "active IS TRUE",
  W + "active IS NOT TRUE",
  W + "active IS FALSE",
  W + "active IS NOT FALSE",
  W + "volume IS TRUE",
  W + "price IS FALSE",
  W + "qty",
  W + "price",
  W + "NOT volume",
  W + "(price > 1) = (volume > 1)",
  W + "(price > 1) + (volume > 1) = 1",
  W + "note",
  // IS / IS NOT: NULL-safe.
  W + "price IS 101.5",
  W + "price IS NOT NULL AND volume IS NOT 10",
  W + "note IS 10",
  W + "volume IS '10'",
  W + "price IS volume",
  W + "price IS NOT volume",
  W + "pair IS note",
  W + "payload IS X'0102'",
  W + "payload IS NULL",
  W + "trade_date IS '2024-01-01'",
  W + "NULL IS NULL AND 1 IS NOT NULL",
  W + "volume IS 'x'",
  // Text order and equality by code point.
  W + "pair > 'ETH'",
  W + "pair < 'eth'",
  W + "pair >= 'É'",
  W + "pair > '😀'",
  W + "pair < '\uFFFF'",
  W + "label > 'a' AND label < 'b'",
  W + "label = 'abc'",
  W + "code = '00000000-0000-0000-0000-000000000001'",
  W + "code > '1'",
  W + "note = ''",
  W + "\"order\" = '  '",
  W + "pair BETWEEN 'A' AND 'Z'",
  W + "pair NOT BETWEEN 'a' AND 'z'",
  W + "label IN ('abc', 'ABC', 'é')",
  W + "pair IN ('ETH/USDC', 1, NULL)",
  W + "pair NOT IN ('ETH/USDC', 'BTC/USDC')",
  W + "pair NOT IN ('ETH/USDC', NULL)",
  W + "volume IN (10, '20', 2.0, NULL)",
  W + "volume NOT IN (10, 20)",
  W + "price IN (101.5, 0, -0.0)",
  W + "payload IN (X'0102', X'')",
  W + "coalesce(price, 'none') IN (101.5, 'none')",
  W + "coalesce(note, volume) > 5",
  W + "coalesce(payload, note, volume) IS 'x'",
  W + "note BETWEEN 5 AND 20",
  W + "volume BETWEEN '1' AND '20'",
  W + "note LIKE 'café%' ESCAPE 'é'",
  W + "note LIKE 'cafée%' ESCAPE 'é'",
  W + "pair LIKE '%😀%' OR pair GLOB '*[😀-😂]*'",
  W + "strftime('%Y', trade_date) = 2024",
  W + "strftime('%Y-%m', trade_date) > 2024",
  W + "date(created_at) > 5",
  W + "'abc'",
  W + "' 12abc'",
  W + "'-0'",
  W + "\"Fee Rate\" IN (0.003, 12, 0.1)",
  // LIKE: ASCII case only, _ one character, ESCAPE.
  W + "pair LIKE 'eth%'",
  W + "pair LIKE 'ÉTH%'",
  W + "pair LIKE 'éth%'",
  W + "pair LIKE 'STRASSE'",
  W + "pair LIKE 'STRAßE'",
  W + "note LIKE 'éclair'",
  W + "note LIKE '%É%'",
  W + "pair LIKE '_/%'",
  W + "pair LIKE '__/%'",
  W + "pair LIKE '%\\%'",
  W + "pair LIKE 'x\\y'",
  W + "pair LIKE 'a!%b' ESCAPE '!'",
  W + "pair LIKE 'a!_b' ESCAPE '!'",
  W + "pair LIKE 'a\\_b' ESCAPE '\\'",
  W + "pair LIKE 'a%' ESCAPE 'a'",
  W + "pair LIKE 'ETH!' ESCAPE '!'",
  W + "note NOT LIKE '%0%'",
  W + "note LIKE pair",
  W + "pair LIKE note",
  W + "volume LIKE '1%'",
  W + "trade_date LIKE '2024-01%'",
  W + "created_at LIKE '%.%'",
  W + "seen_at LIKE '%:59.%'",
  W + "code LIKE '%00A'",
  W + "label LIKE '%'",
  W + "label LIKE ''",
  W + "price LIKE '1%'",
  W + "pair LIKE lower('ETH%')",
  W + "lower(pair) LIKE '%usdc'",
  W + "'ETH/USDC' LIKE pair",
  // GLOB: case-sensitive, classes.
  W + "pair GLOB 'E*'",
  W + "pair GLOB 'e*'",
  W + "pair GLOB '*USDC'",
  W + "pair GLOB '?TH/*'",
  W + "pair GLOB '[A-E]*'",
  W + "pair GLOB '[^A-E]*'",
  W + "pair GLOB '[a-z]*'",
  W + "pair GLOB '[]x]*'",
  W + "pair GLOB '[[]x]*'",
  W + "pair GLOB '*[*]*'",
  W + "pair GLOB '*[?]'",
  W + "pair GLOB '[z-a]*'",
  W + "pair GLOB '[^z-a]*'",
  W + "pair GLOB '[a-]*'",
  W + "pair GLOB '[-a]*'",
  W + "pair GLOB '[ÉE]*'",
  W + "pair GLOB '[😀]*'",
  W + "pair GLOB '[x'",
  W + "pair GLOB '*%*'",
  W + "pair GLOB 'a_b'",
  W + "pair GLOB '*\\*'",
  W + "pair NOT GLOB '*/*'",
  W + "volume GLOB '1*'",
  W + "trade_date GLOB '2024-0[1-3]-*'",
  W + "note GLOB pair",
  // Functions.
  W + "lower(pair) = 'eth/usdc'",
  W + "upper(pair) = 'ÉTH/USDC'",
  W + "upper(note) = 'STRASSE'",
  W + "lower(note) = 'éclair'",
  W + "upper(label) = 'ABC'",
  W + "lower(volume) = '10'",
  W + "length(pair) = 8",
  W + "length(note) = 1",
  W + "length(payload) = 2",
  W + "length(volume) = 2",
  W + "length(trade_date) = 10",
  W + "length(created_at) > 19",
  W + "length(price) = 5",
  W + "substr(pair, 1, 3) = 'ETH'",
  W + "substr(pair, 0, 3) = 'ET'",
  W + "substr(pair, -4) = 'USDC'",
  W + "substr(pair, -4, 2) = 'US'",
  W + "substr(pair, -20, 18) = 'ETH/USDC'",
  W + "substr(pair, 3, -2) = 'ET'",
  W + "substr(pair, 0, -1) = ''",
  W + "substr(pair, -3, -2) = 'US'",
  W + "substr(pair, 10) = ''",
  W + "substring(note, 2) = 'y'",
  W + "substr(payload, 2, 1) = X'02'",
  W + "substr(payload, -1) = X'80'",
  W + "substr(volume, 1, 1) = '1'",
  W + "substr(pair, volume) = 'x'",
  W + "substr(pair, 1, NULL) IS NULL",
  W + "trim(note) = 'y'",
  W + "ltrim(note) = 'y'",
  W + "rtrim(note) = 'z'",
  W + "trim(\"order\") = ''",
  W + "trim(pair, '/ETH') = 'USDC'",
  W + "trim(pair, 'ÉTHUsdc') = '/'",
  W + "ltrim(pair, '') = pair",
  W + "rtrim(label, NULL) IS NULL",
  W + "instr(pair, '/') = 4",
  W + "instr(pair, '') = 1",
  W + "instr(note, 'É') = 1",
  W + "instr(pair, 'usdc') > 0",
  W + "instr(payload, X'02') = 2",
  W + "instr(payload, 'a') = 1",
  W + "replace(pair, '/', '-') = 'ETH-USDC'",
  W + "replace(pair, '', 'x') = pair",
  W + "replace(note, 'É', 'E') = 'ECLAIR'",
  W + "replace(volume, '0', 'o') = '1o'",
  W + "abs(volume) = 5",
  W + "abs(price) = 1.5",
  W + "abs(qty) > 100",
  W + "abs(active) = 1",
  W + "abs(note) = 0",
  W + "abs(-9223372036854775807) > 0",
  W + "round(price) = 102",
  W + "round(price) = 3",
  W + "round(price) = -3",
  W + "round(price) = 1",
  W + "round(price, 0) = 0",
  W + "round(price, -1) = 100",
  W + "round(price, 1) = 101.5",
  W + "round(volume) = 10",
  W + "round(volume, 2) = 10",
  W + "round(2.5) = 3 AND round(-2.5) = -3 AND round(0.49999999999999994) = 1",
  W + "round(price, NULL) IS NULL",
  W + "round(\"Fee Rate\") = 12",
  W + "coalesce(price, 0) = 0",
  W + "coalesce(price, -1) < 0",
  W + "ifnull(volume, -1) = -1",
  W + "coalesce(note, 'none') = 'none'",
  W + "coalesce(note, pair) = 'ETH/DAI'",
  W + "coalesce(NULL, volume, 5) = 5",
  W + "coalesce(price, volume) = 20",
  W + "coalesce(price, 1) / 2 = 0.5",
  W + "coalesce(price, 0) * 2 > 100",
  W + "round(abs(coalesce(price, 0)) * 2) > 10",
  W + "coalesce(trade_date, '2000-01-01') < '2001'",
  W + "coalesce(note, 1) = '1'",
  W + "nullif(volume, 10) IS NULL",
  W + "nullif(volume, '10') IS NULL",
  W + "nullif(price, 0) IS NULL",
  W + "nullif(pair, 'ETH/USDC') IS NULL",
  W + "nullif(note, 10) IS NULL",
  W + "nullif(volume, 10.0) IS NULL",
  W + "nullif(active, 1) IS NULL",
  // Dates and timestamps: their text in SQLite.
  W + "trade_date = '2024-01-01'",
  W + "trade_date >= '2024-01-01'",
  W + "trade_date < '2024-01'",
  W + "trade_date > '2024-01-01 00:00:00'",
  W + "trade_date <= '2024-01-01 00:00:00'",
  W + "trade_date = '2024-01-01 00:00:00'",
  W + "trade_date > '2024-13-01'",
  W + "trade_date < '1000'",
  W + "trade_date > '20240101'",
  W + "trade_date = 2024",
  W + "trade_date BETWEEN '2024-01-01' AND '2024-02-01'",
  W + "trade_date IN ('2024-01-01', '2024-02-29')",
  W + "trade_date > created_at",
  W + "trade_date < created_at",
  W + "trade_date = date(created_at)",
  W + "created_at = '2024-01-02 13:30:00'",
  W + "created_at > '2024-01-02 13:30:00'",
  W + "created_at >= '2024-01-03'",
  W + "created_at > '2024-01-03'",
  W + "created_at < '2024-01-03'",
  W + "created_at <= '2024-01-03'",
  W + "created_at = '2024-01-03'",
  W + "created_at != '2024-01-03'",
  W + "created_at > '2024-01-02 23:59:59.9'",
  W + "created_at > '2024-01-02 23:59:59.99961'",
  W + "created_at = '2024-01-02 23:59:59.9996'",
  W + "created_at < '2024-01-02T23'",
  W + "created_at > '2024-01-02 13'",
  W + "created_at > '1970'",
  W + "created_at BETWEEN '2024-01-01' AND '2024-01-31'",
  W + "created_at IN ('2024-01-01 10:00:00', '2024-01-03')",
  W + "created_at > seen_at",
  W + "created_at = seen_at",
  W + "seen_at >= '2024-01-02'",
  W + "seen_at = '2024-01-02 13:30:00.5'",
  W + "date(created_at) = '2024-01-02'",
  W + "date(seen_at) = '2024-01-02'",
  W + "date(trade_date) = '2024-01-01'",
  W + "time(created_at) > '12:00:00'",
  W + "time(created_at) = '23:59:59'",
  W + "time(trade_date) = '00:00:00'",
  W + "datetime(created_at) = '2024-01-02 23:59:59'",
  W + "datetime(trade_date) = '2024-01-01 00:00:00'",
  W + "datetime(created_at, '+1 day') > '2024-01-03'",
  W + "julianday(trade_date) - julianday('2024-01-01') >= 1",
  W + "julianday(trade_date) = 2460310.5",
  W + "julianday(created_at) > 2460310",
  W + "unixepoch(created_at) > 1704067200",
  W + "unixepoch(created_at) = -1",
  W + "unixepoch(created_at) = 1704239999",
  W + "unixepoch(seen_at) = -1",
  W + "unixepoch(trade_date) = 1704067200",
  W + "unixepoch('2024-01-01') = 1704067200",
  W + "date('2024-01-01 10:00:00') = '2024-01-01'",
  W + "date('now') > '2000'",
  W + "date() > '2000'",
  W + "date(note) IS NULL",
  W + "strftime('%Y', trade_date) = '2024'",
  W + "strftime('%Y-%m', created_at) = '2024-01'",
  W + "strftime('%d/%m/%Y %H:%M:%S %%', created_at) = '02/01/2024 23:59:59 %'",
  W + "strftime('%H', trade_date) = '00'",
  W + "strftime('', trade_date) = ''",
  W + "strftime('%Y', trade_date) < '1000'",
  W + "strftime('%j', trade_date) = '001'",
  W + "strftime('%f', created_at) > '59'",
  // Concatenation.
  W + "pair || '!' = 'ETH/USDC!'",
  W + "pair || volume = 'ETH/USDC10'",
  W + "volume || qty = '103'",
  W + "note || NULL IS NULL",
  W + "trade_date || 'x' = '2024-01-01x'",
  W + "active || '' = '1'",
  W + "price || '' = '101.5'",
  W + "payload || '' = 'a'",
  // NUMERIC.
  W + "\"Fee Rate\" > 0.001",
  W + "\"Fee Rate\" = 0.003",
  W + "\"Fee Rate\" = 12",
  W + "\"Fee Rate\" >= 1.5 AND \"Fee Rate\" <= 100",
  W + "\"Fee Rate\" < 0",
  W + "\"Fee Rate\" = '0.5'",
  W + "\"Fee Rate\" > price",
  W + "\"Fee Rate\" = volume",
  W + "\"Fee Rate\" BETWEEN 0.0001 AND 0.003",
  W + "\"Fee Rate\" > 0.10000000000000000001",
  W + "\"Fee Rate\" * 2 > 1",
  W + "CAST(\"Fee Rate\" AS REAL) > 0.1",
  W + "CAST(\"Fee Rate\" AS INTEGER) = 100",
  W + "\"Fee Rate\"",
  // Blobs.
  W + "payload = X'0102'",
  W + "payload > X'01'",
  W + "payload < X'0102'",
  W + "payload >= X''",
  W + "length(payload) = 0",
  // Literals.
  W + "id = 0x03",
  W + "id = 0xFFFFFFFFFFFFFFFF + 2",
  W + "volume > -9223372036854775808",
  W + "price > 1e2",
  W + "price > .5",
  W + "price < 1e999",
  W + "price > -1e999",
  W + "pair = 'it''s'",
  W + "note = 'café'",
  W + "note = 'back\\slash'",
  W + "1 = 1",
  W + "NULL",
  W + "NOT NULL",
  W + "0",
  W + "'1'",
  W + "1.5",
  // Sorting, limits.
  "SELECT id, pair FROM swaps ORDER BY pair",
  "SELECT id, pair FROM swaps ORDER BY pair DESC",
  "SELECT id, label FROM swaps ORDER BY label NULLS LAST, id",
  "SELECT id, note FROM swaps ORDER BY note DESC NULLS FIRST LIMIT 5",
  "SELECT id FROM swaps ORDER BY price",
  "SELECT id FROM swaps ORDER BY price DESC LIMIT 3 OFFSET 2",
  "SELECT id FROM swaps ORDER BY volume DESC, id",
  "SELECT id FROM swaps ORDER BY active, id DESC",
  "SELECT id FROM swaps ORDER BY trade_date DESC",
  "SELECT id FROM swaps ORDER BY created_at",
  "SELECT id FROM swaps ORDER BY seen_at DESC NULLS LAST",
  "SELECT id FROM swaps ORDER BY payload",
  "SELECT id FROM swaps ORDER BY \"Fee Rate\" DESC",
  "SELECT id FROM swaps ORDER BY qty",
  "SELECT id FROM swaps ORDER BY ratio DESC",
  "SELECT id FROM swaps ORDER BY code",
  "SELECT id, \"order\" AS o FROM swaps ORDER BY o, id LIMIT 4",
  "SELECT * FROM swaps ORDER BY id LIMIT 3 OFFSET 17",
  "SELECT * FROM swaps LIMIT 0",
  "SELECT * FROM swaps LIMIT 5",
  "SELECT * FROM swaps WHERE id > 5 LIMIT 100 OFFSET 3",
];

/** The columns by the kind of their values, for generated queries. */
const KINDS = {
  int: ["id", "volume", "qty"],
  real: ["price", "ratio"],
  text: ["pair", "note", '"order"', "label", "code"],
  bool: ["active"],
  date: ["trade_date"],
  time: ["created_at", "seen_at"],
  blob: ["payload"],
  numeric: ['"Fee Rate"'],
} as const;

const LITERALS: Record<keyof typeof KINDS, string[]> = {
  int: ["0", "1", "2", "3", "-5", "10", "42", "1000", "9007199254740993", "2.5", "-0.5", "1e3", "'10'", "NULL", "0x10"],
  real: ["0", "1.5", "-1.5", "0.1", "99.5", "100", "2.5e1", "0.5", "1e15", "'2.5'", "NULL", "7"],
  text: ["'ETH/USDC'", "'eth/usdc'", "'x'", "''", "'straße'", "'ÉCLAIR'", "'a%b'", "'10'", "10", "'M'", "'😀'", "NULL", "'z '"],
  bool: ["TRUE", "FALSE", "1", "0", "NULL", "2"],
  date: ["'2024-01-01'", "'2024-01-02 00:00:00'", "'2024-02'", "'2024-13-01'", "'0999-12-31'", "'20240101'", "'2024'", "NULL"],
  time: ["'2024-01-02'", "'2024-01-02 13:30:00'", "'2024-01-02 13:30'", "'2024-01-02T13:30:00'", "'2024-01-02 23:59:59.9996'", "'1970'", "NULL"],
  blob: ["X'0102'", "X''", "X'FF'", "X'61'", "NULL"],
  numeric: ["0.001", "0.003", "0", "12", "1.5", "'0.002'", "-0.25", "100"],
};

const COMPARISONS = ["=", "==", "!=", "<>", "<", "<=", ">", ">=", "IS", "IS NOT"];

/** `count` WHERE/ORDER BY/LIMIT queries, seeded. */
export function generatedQueries(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const kind = () => pick(Object.keys(KINDS) as (keyof typeof KINDS)[]);
  const patterns = ["'ETH%'", "'%usdc'", "'_TH%'", "'%É%'", "'%a_b%'", "'%\\%'", "'%!%%' ESCAPE '!'", "'2024-01%'", "'%'"];
  const globs = ["'E*'", "'*USDC'", "'[A-E]*'", "'[^a-z]*'", "'?TH*'", "'*[%_]*'", "'*/*'", "'2024-0[1-2]*'"];
  const valueOf = (k: keyof typeof KINDS): string => {
    const column = pick(KINDS[k]);
    switch (Math.floor(next() * 8)) {
      case 0:
        if (k === "text") return pick([`lower(${column})`, `upper(${column})`, `trim(${column})`, `substr(${column}, ${pick(["1", "2", "-3", "0"])}, ${pick(["2", "3", "-1"])})`, `replace(${column}, '/', '-')`]);
        if (k === "int" || k === "real") return pick([`abs(${column})`, `round(${column})`, `${column} + ${pick(["1", "2.5", "-3"])}`, `${column} * ${pick(["2", "0.5"])}`, `${column} / ${pick(["2", "2.0", "0"])}`, `${column} % 3`, `-${column}`]);
        if (k === "date" || k === "time") return pick([`date(${column})`, `time(${column})`, `datetime(${column})`, `unixepoch(${column})`, `strftime('%Y-%m', ${column})`]);
        return column;
      case 1:
        return `coalesce(${column}, ${pick(LITERALS[k])})`;
      case 2:
        return `CAST(${column} AS ${pick(["INTEGER", "REAL", "TEXT", "BLOB", "NUMERIC"])})`;
      default:
        return column;
    }
  };
  const atom = (): string => {
    const k = kind();
    switch (Math.floor(next() * 9)) {
      case 0:
        return `${valueOf(k)} IS ${pick(["", "NOT "])}NULL`;
      case 1:
        return `${valueOf(k)} ${pick(["", "NOT "])}IN (${pick(LITERALS[k])}, ${pick(LITERALS[k])}${next() < 0.5 ? `, ${pick(LITERALS[pick(["int", "text", "real"] as const)])}` : ""})`;
      case 2:
        return `${valueOf(k)} ${pick(["", "NOT "])}BETWEEN ${pick(LITERALS[k])} AND ${pick(LITERALS[k])}`;
      case 3: {
        const text = pick([...KINDS.text, "trade_date", "created_at", "volume"]);
        return next() < 0.6 ? `${text} ${pick(["", "NOT "])}LIKE ${pick(patterns)}` : `${text} ${pick(["", "NOT "])}GLOB ${pick(globs)}`;
      }
      case 4:
        return `${valueOf(k)} ${pick(COMPARISONS)} ${valueOf(next() < 0.7 ? k : kind())}`;
      case 5:
        return pick(["active", "active IS TRUE", "active IS NOT FALSE", "NOT active", `${pick(KINDS.int)}`, `${pick(KINDS.real)} IS FALSE`]);
      default:
        return `${valueOf(k)} ${pick(COMPARISONS)} ${pick(LITERALS[k])}`;
    }
  };
  const condition = (depth: number): string => {
    if (depth === 0 || next() < 0.4) return atom();
    const shape = next();
    if (shape < 0.15) return `NOT (${condition(depth - 1)})`;
    return `(${condition(depth - 1)}) ${pick(["AND", "OR"])} (${condition(depth - 1)})`;
  };
  const sortable = ["id", "pair", "price", "volume", "active", "trade_date", "created_at", "payload", "note", '"Fee Rate"', "qty", "ratio", "label", "code", "seen_at"];
  return Array.from({ length: count }, () => {
    const parts = [`SELECT ${pick(["id", "id, pair", "*", "pair AS p, price", "id, created_at, \"Fee Rate\""])} FROM swaps`];
    if (next() < 0.9) parts.push(`WHERE ${condition(2)}`);
    if (next() < 0.35) {
      const first = pick(sortable);
      const terms = [`${first}${pick(["", " ASC", " DESC"])}${pick(["", "", " NULLS FIRST", " NULLS LAST"])}`];
      if (next() < 0.5 && first !== "id") terms.push(`id${pick(["", " DESC"])}`);
      parts.push(`ORDER BY ${terms.join(", ")}`);
    }
    if (next() < 0.25) parts.push(`LIMIT ${pick(["1", "3", "10"])}${next() < 0.4 ? ` OFFSET ${pick(["1", "2", "5"])}` : ""}`);
    return parts.join(" ");
  });
}

/**
 * Expressions of any shape over any columns and literals (kinds mixed at random): most are refused,
 * and each one compiled must still answer as SQLite does.
 */
export function mixedQueries(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const columns = Object.values(KINDS).flat();
  const literals = Object.values(LITERALS).flat();
  const binary = [...COMPARISONS, "+", "-", "*", "/", "%", "||", "AND", "OR", "LIKE", "GLOB", "NOT LIKE"];
  const functions: [string, number][] = [
    ["abs", 1], ["round", 1], ["round", 2], ["lower", 1], ["upper", 1], ["length", 1], ["substr", 2], ["substr", 3], ["trim", 1], ["trim", 2],
    ["ltrim", 1], ["rtrim", 2], ["instr", 2], ["replace", 3], ["coalesce", 2], ["coalesce", 3], ["ifnull", 2], ["nullif", 2], ["date", 1],
    ["time", 1], ["datetime", 1], ["julianday", 1], ["unixepoch", 1], ["strftime", 2],
  ];
  const expr = (depth: number): string => {
    if (depth === 0 || next() < 0.3) return next() < 0.5 ? pick(columns) : pick(literals);
    switch (Math.floor(next() * 7)) {
      case 0:
        return `${pick(["-", "+", "NOT "])}(${expr(depth - 1)})`;
      case 1: {
        const [name, arity] = pick(functions);
        const args = Array.from({ length: arity }, (_, i) => (name === "strftime" && i === 0 ? pick(["'%Y'", "'%Y-%m-%d'", "'%H:%M'"]) : expr(depth - 1)));
        return `${name}(${args.join(", ")})`;
      }
      case 2:
        return `CAST(${expr(depth - 1)} AS ${pick(["INTEGER", "REAL", "TEXT", "BLOB", "NUMERIC"])})`;
      case 3:
        return `(${expr(depth - 1)}) ${pick(["", "NOT "])}BETWEEN (${expr(depth - 1)}) AND (${expr(depth - 1)})`;
      case 4:
        return `(${expr(depth - 1)}) ${pick(["", "NOT "])}IN (${pick(literals)}, ${pick(literals)})`;
      default:
        return `(${expr(depth - 1)}) ${pick(binary)} (${expr(depth - 1)})`;
    }
  };
  return Array.from({ length: count }, () => `SELECT id FROM swaps WHERE ${expr(3)}`);
}
