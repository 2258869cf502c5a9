/**
 * The demo's swaps as Parquet (README "Parquet and DuckDB tables"): writes ./lake/swaps.parquet
 * (or the folder given) from the built-in demo database, with DuckDB, and a config serving it:
 *   bun scripts/demo-parquet.ts [folder]  &&  bun src/main.ts serve --config <folder>/arrow402.yaml
 */
import { Database } from "bun:sqlite";
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createDemoDatabase } from "../src/demo/database.ts";

const folder = resolve(process.argv[2] ?? "lake");
mkdirSync(folder, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "arrow402-demo-"));
try {
  const sqlitePath = join(scratch, "demo.sqlite");
  createDemoDatabase(sqlitePath);
  const demo = new Database(sqlitePath, { readonly: true });
  const duck = await DuckDBInstance.create(":memory:");
  const connection = await duck.connect();
  const columns = ["id", "block_number", "block_time", "tx_hash", "pool", "trader", "token_in", "token_out", "amount_in", "amount_out", "amount_usd", "fee_bps", "gas_used", "day"];
  await connection.run(`CREATE TABLE staged (${columns.map((c) => `${c} VARCHAR`).join(", ")})`);
  const appender = await connection.createAppender("staged");
  for (const row of demo.query(`SELECT ${columns.join(", ")} FROM swaps ORDER BY id`).values()) {
    for (const value of row) {
      if (value === null) appender.appendNull();
      else appender.appendVarchar(String(value));
    }
    appender.endRow();
  }
  appender.closeSync();
  demo.close();
  // The demo's SQLite types as DuckDB's: block_time an instant (UTC), day a date, the amounts doubles.
  await connection.run(`COPY (
    SELECT id::BIGINT AS id, block_number::BIGINT AS block_number, block_time::TIMESTAMPTZ AS block_time, tx_hash, pool, trader,
      token_in, token_out, amount_in::DOUBLE AS amount_in, amount_out::DOUBLE AS amount_out, amount_usd::DOUBLE AS amount_usd,
      fee_bps::INTEGER AS fee_bps, gas_used::BIGINT AS gas_used, day::DATE AS day
    FROM staged ORDER BY id
  ) TO '${join(folder, "swaps.parquet").replaceAll("'", "''")}' (FORMAT parquet)`);
  connection.closeSync();
  duck.closeSync();
  writeFileSync(
    join(folder, "arrow402.yaml"),
    [
      "databases:",
      '  lake: { duckdb: ":memory:" }',
      "tables:",
      "  - name: swaps",
      "    files: ./swaps.parquet",
      "    description: DEX swaps on Base, 30 days, served from Parquet.",
      "",
    ].join("\n"),
  );
  console.log(`${join(folder, "swaps.parquet")} and ${join(folder, "arrow402.yaml")} written; serve them with: arrow402 serve --config ${join(folder, "arrow402.yaml")}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
