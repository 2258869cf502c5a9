/**
 * A DuckDB source's memory_limit (`databases.<name>.memory_limit_mb`, default 1024) through the
 * real listening server: a query that needs more than its source allows is a 400 that names the
 * setting and says what to change, and the server goes on serving; a whole 1M-row export streams
 * within 64 MiB; the same query on a source with more room is answered (the limit is the source's).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { openDuckDB } from "../../src/engines/duckdb/database.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir } from "../support/fixtures.ts";

const ROWS = 1_000_000;
/** Sorting every row keeps them all (a top-N of 1M rows): ~100 MB in DuckDB, past 64 MiB. */
const SORT_ALL = `SELECT id, address FROM %s ORDER BY address DESC LIMIT ${ROWS}`;
let server: RunningServer;
let dir: string;

beforeAll(async () => {
  dir = tempDir();
  const writer = await DuckDBInstance.create(":memory:");
  const connection = await writer.connect();
  await connection.run(`COPY (SELECT g::BIGINT AS id, md5(g::VARCHAR) || md5((-g)::VARCHAR) AS address FROM range(${ROWS}) r(g))
                        TO '${join(dir, "transfers.parquet")}' (FORMAT parquet)`);
  connection.closeSync();
  writer.closeSync();
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0" },
      databases: { tight: { duckdb: ":memory:", memory_limit_mb: 64, threads: 1 }, roomy: { duckdb: ":memory:", memory_limit_mb: 512 } },
      limits: { max_rows: ROWS, query_timeout_ms: 30_000 },
      tables: [
        { name: "transfers", database: "tight", files: "./transfers.parquet" },
        { name: "transfers_roomy", database: "roomy", files: "./transfers.parquet" },
      ],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config, { workers: 1 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

const get = (sql: string) => fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { "accept-encoding": "identity" } });

test("a query that needs more than the source's memory_limit is a 400 naming the setting and what to change", async () => {
  const response = await get(SORT_ALL.replace("%s", "transfers"));
  expect(response.status).toBe(400);
  expect(response.headers.get("content-type")).toStartWith("text/plain");
  const text = await response.text();
  expect(text).toContain("needed more memory than the DuckDB source 'tight' allows (databases.tight.memory_limit_mb: 64 MiB");
  expect(text).toContain("add a WHERE condition or a smaller LIMIT");
  // The source goes on serving.
  const small = await get("SELECT id FROM transfers WHERE id < 3 ORDER BY id");
  expect(small.status).toBe(200);
  expect(tableFromIPC(new Uint8Array(await small.arrayBuffer())).getChild("id")!.toArray()).toEqual(new BigInt64Array([0n, 1n, 2n]));
}, 60_000);

test("a whole 1M-row export streams within 64 MiB", async () => {
  const response = await get("SELECT id, address FROM transfers");
  expect(response.status).toBe(200);
  const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
  expect(table.numRows).toBe(ROWS);
  expect(table.getChild("address")!.get(ROWS - 1)).toHaveLength(64);
}, 60_000);

test("the limit is the source's: the same query on a source with room is answered", async () => {
  const response = await get(`${SORT_ALL.replace("%s", "transfers_roomy")}`);
  expect(response.status).toBe(200);
  const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
  expect(table.numRows).toBe(ROWS);
  const addresses = table.getChild("address")!;
  expect(addresses.get(0)! >= addresses.get(1)!).toBe(true);
}, 60_000);

test("the settings reach DuckDB: memory_limit, and threads when given (DuckDB's default otherwise)", async () => {
  const read = async (settings: { memoryLimitMb: number; threads: number | null }) => {
    const { instance } = await openDuckDB(":memory:", [], settings);
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll("SELECT current_setting('memory_limit'), current_setting('threads')")).getRowsJS()[0]!;
    connection.closeSync();
    instance.closeSync();
    return rows;
  };
  expect(await read({ memoryLimitMb: 100, threads: 1 })).toEqual(["100.0 MiB", 1n]);
  const [limit, threads] = await read({ memoryLimitMb: 1024, threads: null });
  expect(limit).toBe("1.0 GiB");
  expect(threads).toBeGreaterThanOrEqual(1n);
});
