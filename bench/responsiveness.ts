/**
 * Item 2, responsiveness: GET /api/ latency while four 1M-row exports run at once. The four
 * bodies are read on a worker thread of the bench process; the main thread sends one GET /api/
 * after another (5 ms apart) until they finish. The same probe on an idle server is the reference.
 */
import { queryUrl } from "./arrow-client.ts";
import { TABLE_SQL } from "./dataset.ts";
import type { LoadDone, LoadJob } from "./load-worker.ts";
import type { ChildServer } from "./processes.ts";
import { ms, runsOf, type SectionResult } from "./report.ts";
import { median, percentile } from "./stats.ts";

const PARALLEL_QUERIES = 4;
const PROBE_GAP_MS = 5;
const IDLE_PROBE_MS = 2_000;

async function probeOnce(url: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(url, { headers: { "accept-encoding": "identity" } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET /api/ answered ${response.status}`);
  return performance.now() - start;
}

async function probeUntil(url: string, done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!done()) {
    latencies.push(await probeOnce(url));
    await Bun.sleep(PROBE_GAP_MS);
  }
  return latencies;
}

export async function underLoad(server: ChildServer, rowCount: number): Promise<{ latencies: number[]; loadMs: number }> {
  const worker = new Worker(new URL("./load-worker.ts", import.meta.url).href);
  try {
    const finished = new Promise<LoadDone>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<LoadDone>) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(`the load worker failed: ${event.message}`));
    });
    let done = false;
    void finished.then(() => (done = true), () => (done = true));
    worker.postMessage({ url: queryUrl(server.url, TABLE_SQL), parallel: PARALLEL_QUERIES } satisfies LoadJob);
    const latencies = await probeUntil(`${server.url}/api/`, () => done);
    const load = await finished;
    if ("error" in load) throw new Error(load.error);
    if (load.bytes.some((b) => b < rowCount * 8)) throw new Error(`a background export was cut short: ${load.bytes.join(", ")} bytes`);
    return { latencies, loadMs: load.ms };
  } finally {
    worker.terminate();
  }
}

export async function measureResponsiveness(server: ChildServer, rowCount: number, runs: number): Promise<SectionResult> {
  const idleEnd = performance.now() + IDLE_PROBE_MS;
  const idle = await probeUntil(`${server.url}/api/`, () => performance.now() > idleEnd);
  const p99s: number[] = [];
  const counts: number[] = [];
  const loads: number[] = [];
  for (let run = 0; run < runs; run++) {
    const { latencies, loadMs } = await underLoad(server, rowCount);
    p99s.push(percentile(latencies, 99));
    counts.push(latencies.length);
    loads.push(loadMs);
  }
  const p99 = median(p99s);
  const idleP99 = percentile(idle, 99);
  const during = `${PARALLEL_QUERIES} × ${rowCount}-row exports`;
  return {
    checks: [{ item: "2", figure: `GET /api/ p99 during ${during}`, measured: ms(p99), baseline: `idle p99 ${ms(idleP99)}`, ratio: null, target: "< 20 ms", pass: p99 < 20 }],
    details: [
      { item: "2", name: `GET /api/ p99 runs during ${during}`, value: runsOf(p99s, ms) },
      { item: "2", name: "GET /api/ probes per run", value: counts.join(", ") },
      { item: "2", name: `${during} complete in`, value: runsOf(loads, ms) },
      { item: "2", name: "idle GET /api/ median / p99", value: `${ms(median(idle))} / ${ms(idleP99)} (${idle.length} probes)` },
    ],
  };
}
