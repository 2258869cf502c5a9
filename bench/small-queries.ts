/**
 * Item 1: small filtered queries at 32 concurrent connections (autocannon, in the bench process)
 * against a bare Bun.serve process returning the same bytes; runs alternate between the two.
 * Three kinds of filter — a rowid range, an indexed equality with LIMIT 10, a selective unindexed
 * filter with LIMIT 10 — on a 1,000-row and a 1,000,000-row table, plus the unfiltered
 * `LIMIT 10` as a reference line. Every response must be 2xx and byte for byte the body whose
 * rows were checked, else the run throws.
 *
 * The targets are measured as the probe sends them: one query text, repeated. A buyer
 * asking many different questions sends a new text each time, which arrow402 must validate and
 * read anew; so each filtered query is measured again with a text never sent before on every
 * request (`… AND <n> > 0`, a condition that is always true: the same rows, the same bytes).
 */
import autocannon from "autocannon";
import { tableFromIPC } from "apache-arrow";
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { queryUrl, rawInit } from "./arrow-client.ts";
import { COLUMNS, FIRST_BLOCK, ROWS_PER_BLOCK, SMALL_TABLE_ROWS } from "./dataset.ts";
import { spawnServer, type ChildServer } from "./processes.ts";
import { ratio, runsOf, type Check, type Detail, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";

export const CONNECTIONS = 32;
const DURATION_S = 3;
export const WARMUP_S = 1;
const LIMIT = 10;
/**
 * The unindexed filter: nonces below 2^33 (nonces are uniform in [0, 2^40)), about 0.8% of the
 * rows; the smallest round threshold that still finds 10 rows in the 1,000-row table.
 */
const UNINDEXED_PREDICATE = "nonce < 8589934592";

interface SmallQuery {
  kind: string;
  table: string;
  tableRows: number;
  sql: string;
  /** A reference line, not one of the six targets. */
  reference?: boolean;
}

/** The six filtered queries and the unfiltered reference, in the order they are measured. */
export function smallQueries(rowCount: number): SmallQuery[] {
  const queries: SmallQuery[] = [];
  for (const [table, tableRows] of [["transfers_1k", SMALL_TABLE_ROWS], ["transfers", rowCount]] as const) {
    // A block in the middle of the table: 12 rows, of which LIMIT keeps 10.
    const block = FIRST_BLOCK + Math.floor(tableRows / 2 / ROWS_PER_BLOCK);
    const select = `SELECT ${COLUMNS} FROM ${table}`;
    queries.push(
      { kind: "rowid range", table, tableRows, sql: `${select} WHERE id <= ${LIMIT}` },
      { kind: "indexed equality", table, tableRows, sql: `${select} WHERE block = ${block} LIMIT ${LIMIT}` },
      { kind: "unindexed filter", table, tableRows, sql: `${select} WHERE ${UNINDEXED_PREDICATE} LIMIT ${LIMIT}` },
    );
  }
  queries.push({ kind: "unfiltered LIMIT 10", table: "transfers", tableRows: rowCount, sql: `SELECT ${COLUMNS} FROM transfers LIMIT ${LIMIT}`, reference: true });
  return queries;
}

/** What SQLite does for the query, read directly with bun:sqlite: rows, plan, rows examined. */
function describe(db: Database, query: SmallQuery): { rows: number; plan: string } {
  const rows = db.query(query.sql).all().length;
  if (rows !== LIMIT) throw new Error(`${query.sql} returns ${rows} rows directly from SQLite, expected ${LIMIT}: the benchmark data is not what the queries assume`);
  const plan = (db.query(`EXPLAIN QUERY PLAN ${query.sql}`).all() as { detail: string }[]).map((r) => r.detail).join("; ");
  return { rows, plan };
}

/** The unindexed filter's selectivity on `table`, and how many rows a rowid-order scan examines to find LIMIT. */
function selectivity(db: Database, table: string, tableRows: number): string {
  const { matches } = db.query(`SELECT count(*) AS matches FROM ${table} WHERE ${UNINDEXED_PREDICATE}`).get() as { matches: number };
  const { last } = db.query(`SELECT max(id) AS last FROM (SELECT id FROM ${table} WHERE ${UNINDEXED_PREDICATE} LIMIT ${LIMIT})`).get() as { last: number };
  const { examined } = db.query(`SELECT count(*) AS examined FROM ${table} WHERE id <= ?`).get(last) as { examined: number };
  return `\`${UNINDEXED_PREDICATE}\` matches ${matches} of ${tableRows} rows (${((matches / tableRows) * 100).toFixed(2)}%); the scan examines ${examined} rows to find ${LIMIT}`;
}

export interface Run {
  rps: number;
  p99: number;
}

/** Numbers of the always-true conditions: every text of a run, and of the whole benchmark, is new. */
let nextFresh = 1;

/** `sql` with an always-true condition numbered `n` added to its WHERE (before its LIMIT). */
export function freshText(sql: string, n: number): string {
  const limit = sql.indexOf(" LIMIT ");
  return limit === -1 ? `${sql} AND ${n} > 0` : `${sql.slice(0, limit)} AND ${n} > 0${sql.slice(limit)}`;
}

/** autocannon requests whose path is `pathOf(n)` with a new n each time. */
function freshRequests(pathOf: (n: number) => string) {
  return [{ setupRequest: (request: { path: string }) => ({ ...request, path: pathOf(nextFresh++) }) }];
}

export async function requestsPerSecond(url: string, expectBody: string, duration = DURATION_S, fresh?: (n: number) => string): Promise<Run> {
  const expectation = fresh === undefined ? { expectBody } : { verifyBody: (body: string) => body === expectBody, requests: freshRequests(fresh) };
  const result = await autocannon({ url, connections: CONNECTIONS, duration, ...expectation });
  const answered = result["2xx"] + result.non2xx;
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result["2xx"] === 0 || result.mismatches > 0) {
    throw new Error(
      `${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx and ${result.mismatches} bodies other than the checked one in ${answered} responses`,
    );
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

export async function measureSmallQueries(server: ChildServer, dbPath: string, rowCount: number, outDir: string, runs: number): Promise<SectionResult> {
  const queries = smallQueries(rowCount);
  const db = new Database(dbPath, { readonly: true });
  const described = queries.map((query) => describe(db, query));
  const filterNotes = [
    selectivity(db, "transfers_1k", SMALL_TABLE_ROWS),
    selectivity(db, "transfers", rowCount),
  ];
  db.close();

  // arrow402's own answers, checked once, are the bare server's bodies and the expected bodies.
  const bodies: Uint8Array[] = [];
  for (const [index, query] of queries.entries()) {
    const response = await fetch(queryUrl(server.url, query.sql), rawInit("identity"));
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`${query.sql}: expected 200, got ${response.status} ${new TextDecoder().decode(body.subarray(0, 300))}`);
    const rows = tableFromIPC(body).numRows;
    if (rows !== described[index]!.rows) throw new Error(`${query.sql}: arrow402 returned ${rows} rows, SQLite returns ${described[index]!.rows}`);
    bodies.push(body);
  }
  const files = bodies.map((body, index) => {
    const file = join(outDir, `small-query-${index}.arrow`);
    writeFileSync(file, body);
    return file;
  });
  const bare = await spawnServer(["bun", join(import.meta.dir, "bare-server.ts"), ...files], /bare server on (http:\/\/\S+)/);
  const checks: Check[] = [];
  const details: Detail[] = [];
  const freshRows: string[][] = [["query", "arrow402", "bare Bun.serve", "ratio", "runs (arrow402; bare)"]];
  const fmt = (v: number) => `${v.toFixed(0)} req/s`;
  try {
    for (const [index, query] of queries.entries()) {
      const url = queryUrl(server.url, query.sql);
      const bareUrl = `${bare.url}/${index}`;
      const expected = Buffer.from(bodies[index]!).toString();
      // A short unmeasured round on each warms the JIT and the connections.
      await requestsPerSecond(url, expected, WARMUP_S);
      await requestsPerSecond(bareUrl, expected, WARMUP_S);
      const ours: Run[] = [];
      const baseline: Run[] = [];
      for (let run = 0; run < runs; run++) {
        baseline.push(await requestsPerSecond(bareUrl, expected));
        ours.push(await requestsPerSecond(url, expected));
      }
      const rps = median(ours.map((r) => r.rps));
      const bareRps = median(baseline.map((r) => r.rps));
      const label = `${query.kind}, ${query.table} (${query.tableRows} rows)`;
      checks.push({
        item: "1",
        figure: `${query.reference ? "reference: " : ""}${label}, ${CONNECTIONS} connections`,
        measured: fmt(rps),
        baseline: `bare Bun.serve ${fmt(bareRps)}`,
        ratio: rps / bareRps,
        target: "≥ 0.50×",
        pass: rps / bareRps >= 0.5,
      });
      details.push({
        item: "1",
        name: `${label}: \`${query.sql}\``,
        value: `arrow402 ${runsOf(ours.map((r) => r.rps), fmt)}; bare ${runsOf(baseline.map((r) => r.rps), fmt)}; p99 ${median(ours.map((r) => r.p99))} / ${median(baseline.map((r) => r.p99))} ms; ${bodies[index]!.byteLength} bytes, ${LIMIT} rows; SQLite plan: ${described[index]!.plan}`,
      });
    }
    for (const [index, query] of queries.entries()) {
      if (query.reference) continue;
      const expected = Buffer.from(bodies[index]!).toString();
      const ourPath = (n: number) => `/api/query?query=${encodeURIComponent(freshText(query.sql, n))}`;
      const barePath = (n: number) => `/${index}?query=${encodeURIComponent(freshText(query.sql, n))}`;
      await requestsPerSecond(server.url, expected, WARMUP_S, ourPath);
      await requestsPerSecond(bare.url, expected, WARMUP_S, barePath);
      const ours: number[] = [];
      const baseline: number[] = [];
      for (let run = 0; run < runs; run++) {
        baseline.push((await requestsPerSecond(bare.url, expected, DURATION_S, barePath)).rps);
        ours.push((await requestsPerSecond(server.url, expected, DURATION_S, ourPath)).rps);
      }
      const rps = median(ours);
      const bareRps = median(baseline);
      freshRows.push([`${query.kind}, ${query.table} (${query.tableRows} rows)`, fmt(rps), fmt(bareRps), ratio(rps / bareRps), `${runsOf(ours, fmt)}; ${runsOf(baseline, fmt)}`]);
    }
  } finally {
    await bare.stop();
  }
  details.push(...filterNotes.map((note) => ({ item: "1", name: "unindexed filter selectivity", value: note })));
  return { checks, details, tables: [{ title: "Item 1, a new query text on every request (no target: what a buyer asking new questions gets)", rows: freshRows }] };
}
