/**
 * The built-in demo database: DEX-style swaps (paid) and a small token list (free), generated
 * deterministically on first run so `arrow402 serve` works with no setup (ARCHITECTURE.md §1).
 */
import { Database } from "bun:sqlite";
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";

export const DEMO_SWAP_ROWS = 250_000;

const TOKENS = [
  { symbol: "WETH", name: "Wrapped Ether", price: 3150.25, decimals: 18, stable: 0, listed: "2023-08-09" },
  { symbol: "USDC", name: "USD Coin", price: 1.0, decimals: 6, stable: 1, listed: "2023-08-09" },
  { symbol: "USDT", name: "Tether USD", price: 1.0, decimals: 6, stable: 1, listed: "2023-09-14" },
  { symbol: "DAI", name: "Dai Stablecoin", price: 0.9998, decimals: 18, stable: 1, listed: "2023-08-21" },
  { symbol: "cbBTC", name: "Coinbase Wrapped BTC", price: 97250.0, decimals: 8, stable: 0, listed: "2024-09-12" },
  { symbol: "AERO", name: "Aerodrome", price: 1.12, decimals: 18, stable: 0, listed: "2023-08-28" },
  { symbol: "DEGEN", name: "Degen", price: 0.0091, decimals: 18, stable: 0, listed: "2024-01-15" },
  { symbol: "BRETT", name: "Brett", price: 0.087, decimals: 18, stable: 0, listed: "2024-02-29" },
];

const POOLS: [string, string, number][] = [
  ["WETH", "USDC", 5], ["WETH", "USDT", 5], ["cbBTC", "USDC", 5], ["cbBTC", "WETH", 30],
  ["USDC", "DAI", 1], ["USDC", "USDT", 1], ["AERO", "WETH", 30], ["DEGEN", "WETH", 100], ["BRETT", "WETH", 100],
];

/** Small, fast, seeded PRNG (mulberry32): the demo is the same on every machine. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hex(rand: () => number, bytes: number): string {
  let s = "0x";
  for (let i = 0; i < bytes; i++) s += Math.floor(rand() * 256).toString(16).padStart(2, "0");
  return s;
}

/**
 * Maps the i-th swap's position (0..1) to its time (0..1), monotonically: busier weekdays, a
 * daily rhythm peaking in the UTC afternoon, and activity growing over the month, so the demo's
 * charts show the shapes real markets have. The density of swaps in time is 1 / activity'(u).
 */
function activity(u: number): number {
  const days = 30;
  const weekly = (0.25 * Math.sin(2 * Math.PI * (days / 7) * u)) / (2 * Math.PI * (days / 7));
  const daily = (0.45 * Math.sin(2 * Math.PI * days * u)) / (2 * Math.PI * days);
  const growth = 1.15 * u - 0.15 * u * u;
  return Math.min(1, Math.max(0, growth + weekly + daily));
}

/** Writes the demo database at `path` (atomically: a half-written file is never left behind). */
export function createDemoDatabase(path: string, swapRows = DEMO_SWAP_ROWS): void {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(partial, { create: true, strict: true });
  db.run("PRAGMA journal_mode = OFF");
  db.run(`CREATE TABLE tokens (
    symbol TEXT PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL, decimals INTEGER NOT NULL,
    price_usd REAL, is_stable BOOLEAN NOT NULL, listed_on DATE NOT NULL)`);
  db.run(`CREATE TABLE swaps (
    id INTEGER PRIMARY KEY, block_number INTEGER NOT NULL, block_time DATETIME NOT NULL,
    tx_hash TEXT NOT NULL, pool TEXT NOT NULL, trader TEXT NOT NULL,
    token_in TEXT NOT NULL, token_out TEXT NOT NULL, amount_in REAL NOT NULL, amount_out REAL NOT NULL,
    amount_usd REAL NOT NULL, fee_bps INTEGER NOT NULL, gas_used INTEGER, day DATE NOT NULL)`);
  const rand = random(402);
  const price = new Map(TOKENS.map((t) => [t.symbol, t.price]));
  const insertToken = db.prepare("INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?, ?)");
  const insertSwap = db.prepare("INSERT INTO swaps VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const traders = Array.from({ length: 5000 }, () => hex(rand, 20));
  const start = Date.UTC(2026, 9, 1); // 2026-10-01, 30 days of swaps
  const span = 30 * 24 * 3600 * 1000;
  db.transaction(() => {
    for (const t of TOKENS) {
      insertToken.run(t.symbol, t.name, hex(rand, 20), t.decimals, t.price, t.stable, t.listed);
    }
    for (let i = 0; i < swapRows; i++) {
      const at = start + Math.floor(activity(i / swapRows) * span + rand() * 2000);
      const pool = POOLS[Math.floor(rand() ** 1.6 * POOLS.length)]!;
      const [a, b, fee] = pool;
      const [tokenIn, tokenOut] = rand() < 0.5 ? [a, b] : [b, a];
      // Log-normal trade sizes, larger in the UTC afternoon.
      const hour = new Date(at).getUTCHours();
      const usd = Math.round(Math.exp(3 + rand() * 6 + rand() * 2) * (0.6 + 0.4 * Math.sin((hour / 24) * Math.PI)) * 100) / 100;
      const amountIn = usd / price.get(tokenIn)!;
      const amountOut = (usd * (1 - fee / 10000)) / price.get(tokenOut)!;
      insertSwap.run(
        i + 1,
        22_000_000 + Math.floor((at - start) / 2000),
        new Date(at).toISOString().slice(0, 19) + "Z",
        hex(rand, 32),
        `${a}/${b}`,
        traders[Math.floor(rand() ** 2 * traders.length)]!,
        tokenIn,
        tokenOut,
        Number(amountIn.toPrecision(10)),
        Number(amountOut.toPrecision(10)),
        usd,
        fee,
        rand() < 0.02 ? null : 90_000 + Math.floor(rand() * 120_000),
        new Date(at).toISOString().slice(0, 10),
      );
    }
  })();
  db.run("CREATE INDEX swaps_block_time ON swaps(block_time)");
  db.run("CREATE INDEX swaps_pool ON swaps(pool)");
  db.close();
  renameSync(partial, path);
}
