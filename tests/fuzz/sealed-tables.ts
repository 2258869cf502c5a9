/**
 * The fixture of the oracle fuzzer (oracles.test.ts): tables whose quotes tell nothing about the
 * data (DESIGN.md §17, README "What a buyer learns before paying"), served by the `sealed` server.
 * - `vault` (fixed price) and `vault_by_limit` (its view, per_row with `quote: limit`): 40 rows, a
 *   few of them traps, holding what SQLite or the Arrow encoder can fail on: the integer -2^63, texts
 *   over SQLite's 50,000-byte pattern limit, a DATE that is not a date, an INTEGER and a BOOLEAN
 *   column holding words;
 * - `slow_vault` (fixed): enough rows for a WHERE to run past the time limit;
 * - `journal` (fixed): the table the fuzzer writes to between presentations of one payment.
 */
import { Database } from "bun:sqlite";
import { PRICES, TOKEN_KEY } from "../support/paid-server.ts";
import type { Limits } from "./environment.ts";

const SMALLEST_INT64 = -(2n ** 63n);
export const VAULT_ROWS = 40;
/** Rows holding values that fail somewhere; every other row is ordinary. */
export const TRAP_ROWS = [7, 19, 31] as const;
/** Rows of `journal` before any case writes; cases write only above JOURNAL_SLOTS_FROM, each in its own slot. */
export const JOURNAL_ROWS = 60;
const JOURNAL_SLOTS_FROM = 1_000;
const JOURNAL_SLOT_SIZE = 8;
const SLOW_ROWS = 100_000;

/**
 * Limits of the sealed server: a time limit short enough that failures (answered no earlier than
 * it) do not slow the run, long enough that reads of the 40-row tables meet it only on a machine
 * far too loaded (then with the same one answer); a small max_rows so
 * that LIMIT and OFFSET probes cross it; an MCP byte cap below the longest trap text; no
 * refused-payment budget (every failure after /verify counts in it, and all cases come from one
 * address).
 */
export const SEALED_LIMITS: Limits = { query_timeout_ms: 500, max_rows: 20, mcp_max_rows: 20, mcp_max_bytes: 40_000, max_refused_payments_per_minute: 0 };

export const VAULT_COLUMNS = ["id", "n", "s", "d", "k", "ok", "r"] as const;

type Value = string | number | bigint | null;
type Row = Record<Exclude<(typeof VAULT_COLUMNS)[number], "id">, Value>;

/** What the trap rows (and one row of NULLs) hold instead of ordinary values. */
const SPECIAL_ROWS: Record<number, Partial<Row>> = {
  // abs(n) overflows; a 60,000-byte pattern (and more than mcp_max_bytes); a DATE that is not a date.
  7: { n: SMALLEST_INT64, s: "x".repeat(60_000), d: "not a date" },
  // The largest int64; a 50,001-byte pattern of wildcards; words in an INTEGER and a BOOLEAN column.
  19: { n: 2n ** 63n - 1n, s: "%".repeat(25_001) + "y".repeat(25_000), k: "nineteen", ok: "maybe" },
  // n - 1 is -2^63; a 50,001-byte GLOB pattern; a date that does not exist.
  31: { n: SMALLEST_INT64 + 1n, s: "*".repeat(50_001), d: "2024-02-30" },
  13: { n: null, s: null, d: null, k: null, ok: null, r: null },
};

/** Creates the tables in the sandbox's database (before the servers open it). */
export function createSealedTables(path: string): void {
  const db = new Database(path, { readwrite: true, safeIntegers: true });
  try {
    db.run("CREATE TABLE vault (id INTEGER PRIMARY KEY, n INTEGER, s TEXT, d DATE, k INTEGER, ok BOOLEAN, r REAL)");
    const insert = db.prepare("INSERT INTO vault VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    for (let id = 1; id <= VAULT_ROWS; id++) {
      const ordinary: Row = { n: BigInt(id * 10 - 200), s: `v${id}`, d: `2024-01-${String((id % 28) + 1).padStart(2, "0")}`, k: BigInt(id), ok: id % 2, r: id / 4 };
      const row = { ...ordinary, ...SPECIAL_ROWS[id] };
      insert.run(id, row.n, row.s, row.d, row.k, row.ok, row.r);
    }
    db.run("CREATE VIEW vault_by_limit AS SELECT * FROM vault");
    db.run("CREATE TABLE slow_vault (id INTEGER PRIMARY KEY, v TEXT)");
    db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${SLOW_ROWS}) INSERT INTO slow_vault SELECT x, 'v' || x FROM c`);
    db.run("CREATE TABLE journal (id INTEGER PRIMARY KEY, note TEXT, amount INTEGER)");
    db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${JOURNAL_ROWS}) INSERT INTO journal SELECT x, 'entry ' || x, x * 3 FROM c`);
  } finally {
    db.close();
  }
}

/** The sealed server's tables: the four above, each sold in the devnet token. */
export function sealedTables(payTo: string): unknown[] {
  const tag = (fields: Record<string, unknown>) => ({ pay_to: payTo, token: TOKEN_KEY, ...fields });
  const fixed = [tag({ type: "fixed", amount: PRICES.flat.config })];
  return [
    { name: "vault", description: "Sold per query", price_tags: fixed },
    { name: "vault_by_limit", description: "Per row by LIMIT", price_tags: [tag({ type: "per_row", amount_per_item: PRICES.cheapPerItem.config, quote: "limit" })] },
    { name: "slow_vault", description: "Sold per query", price_tags: fixed },
    { name: "journal", description: "Sold per query, written to", price_tags: fixed },
  ];
}

/** The ids of a journal case's own rows: no other case writes them. */
export function journalSlot(index: number): number[] {
  const first = JOURNAL_SLOTS_FROM + index * JOURNAL_SLOT_SIZE;
  return Array.from({ length: JOURNAL_SLOT_SIZE }, (_, i) => first + i);
}

/**
 * Writes to the database as another program would, while the servers read it. The servers run in
 * this process: a busy_timeout would wait with the event loop stopped, so nothing of theirs on this
 * thread could end meanwhile. The writer waits between tries instead (as long as a busy_timeout of
 * WRITE_WAIT_MS).
 */
export class DataWriter {
  private readonly db: Database;

  constructor(path: string) {
    this.db = new Database(path, { readwrite: true, safeIntegers: true });
    this.db.run("PRAGMA busy_timeout = 0");
  }

  async run(sql: string, ...params: (string | number | bigint | null)[]): Promise<void> {
    const until = performance.now() + WRITE_WAIT_MS;
    for (;;) {
      try {
        this.db.query(sql).run(...params);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== "SQLITE_BUSY" || performance.now() > until) throw error;
        await Bun.sleep(2);
      }
    }
  }

  close(): void {
    this.db.close();
  }
}

const WRITE_WAIT_MS = 10_000;

/**
 * The oracle's own read of the fixture (safe integers, as the server reads): what SQLite itself
 * answers to a query, or the error it raises.
 */
export class LocalReads {
  private readonly db: Database;

  constructor(path: string) {
    // Only this process writes, between reads: a read never waits.
    this.db = new Database(path, { readonly: true, safeIntegers: true });
  }

  /** The rows as SQLite gives them, or the error SQLite raised running the query. */
  rows(sql: string): { rows: unknown[][] } | { error: string } {
    try {
      return { rows: this.db.query(sql).values() as unknown[][] };
    } catch (error) {
      return { error: String(error) };
    }
  }

  close(): void {
    this.db.close();
  }
}
