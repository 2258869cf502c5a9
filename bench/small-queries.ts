/**
 * Item 4: a free 10-row query at 32 concurrent connections (autocannon, in the bench process)
 * against a bare Bun.serve process returning the same bytes; runs alternate between the two.
 */
import autocannon from "autocannon";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { queryUrl } from "./arrow-client.ts";
import { BENCH_OUT, TABLE_SQL } from "./dataset.ts";
import { spawnServer, type ChildServer } from "./processes.ts";
import { runsOf, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";

const CONNECTIONS = 32;
const DURATION_S = 4;
const SMALL_SQL = `${TABLE_SQL} LIMIT 10`;

async function requestsPerSecond(url: string): Promise<{ rps: number; p99: number }> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S });
  if (result.errors > 0 || result.non2xx > 0 || result["2xx"] === 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result["2xx"]} 2xx`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

export async function measureSmallQueries(server: ChildServer, runs: number): Promise<SectionResult> {
  const url = queryUrl(server.url, SMALL_SQL);
  const body = new Uint8Array(await (await fetch(url)).arrayBuffer());
  const bodyFile = join(BENCH_OUT, "small-query.arrow");
  writeFileSync(bodyFile, body);
  const bare = await spawnServer(["bun", join(import.meta.dir, "bare-server.ts"), bodyFile], /bare server on (http:\/\/\S+)/);
  try {
    const ours: { rps: number; p99: number }[] = [];
    const baseline: { rps: number; p99: number }[] = [];
    // A short unmeasured round on each warms the JIT and the connections.
    await autocannon({ url, connections: CONNECTIONS, duration: 1 });
    await autocannon({ url: bare.url, connections: CONNECTIONS, duration: 1 });
    for (let run = 0; run < runs; run++) {
      baseline.push(await requestsPerSecond(bare.url));
      ours.push(await requestsPerSecond(url));
    }
    const rps = median(ours.map((r) => r.rps));
    const bareRps = median(baseline.map((r) => r.rps));
    const fmt = (v: number) => `${v.toFixed(0)} req/s`;
    return {
      checks: [
        { item: "4", figure: `free 10-row query, ${CONNECTIONS} connections`, measured: fmt(rps), baseline: `bare Bun.serve ${fmt(bareRps)}`, ratio: rps / bareRps, target: "≥ 0.50×", pass: rps / bareRps >= 0.5 },
      ],
      details: [
        { item: "4", name: `arrow402 req/s runs (${DURATION_S} s each)`, value: runsOf(ours.map((r) => r.rps), fmt) },
        { item: "4", name: "bare Bun.serve req/s runs", value: runsOf(baseline.map((r) => r.rps), fmt) },
        { item: "4", name: "latency p99 arrow402 / bare (median)", value: `${median(ours.map((r) => r.p99))} ms / ${median(baseline.map((r) => r.p99))} ms` },
        { item: "4", name: "response body", value: `${body.byteLength} bytes` },
      ],
    };
  } finally {
    await bare.stop();
  }
}
