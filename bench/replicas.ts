/**
 * Item 6: paid requests per second, fixed price, with distinct signed payments, for one replica
 * on the SQLite ledger and for two replicas sharing a PostgreSQL ledger (requests alternate
 * between the two, as a round-robin load balancer would send them). A real PostgreSQL server is
 * started for it (tests/support/postgres.ts). Rounds alternate which setup goes first; payments
 * are signed before a round starts, so signing is not timed. No target: the figures and the ratio.
 */
import type { PaymentPayload } from "@x402/core/types";
import { startPostgres, type PostgresServer } from "../tests/support/postgres.ts";
import { queryUrl } from "./arrow-client.ts";
import { freshDir, startArrow402, writeConfig } from "./arrow402.ts";
import type { DevnetProcess } from "./devnet.ts";
import { createPayer, quote, sendPaid } from "./payer.ts";
import { FIXED_SQL } from "./payments.ts";
import { cpuMs, treeCpuMs, type ChildServer } from "./processes.ts";
import { ms, runsOf, type SectionResult } from "./report.ts";
import { median, percentile } from "./stats.ts";

/** Paid requests per setup per round, and requests in flight at once. */
const REQUESTS = 200;
const CONCURRENCY = 8;
const WARMUP_REQUESTS = 20;
/** What every replica puts in its offers' resource URLs, as behind one load balancer. */
const PUBLIC_URL = "http://127.0.0.1:8402";

interface Setup {
  name: string;
  servers: ChildServer[];
  /** Whether its ledger is the PostgreSQL server (else PostgreSQL's CPU is not its own). */
  postgres: boolean;
}

/** CPU time per paid request, in ms, by who spent it. */
interface CpuShares {
  servers: number;
  postgres: number;
  devnet: number;
  client: number;
}

interface Round {
  rps: number;
  latencies: number[];
  cpu: CpuShares;
}

/** CPU used so far by every process taking part: the replicas, PostgreSQL, the devnet (facilitator + anvil), this client. */
function cpuNow(setup: Setup, devnet: DevnetProcess, postgres: PostgresServer): CpuShares {
  const client = process.cpuUsage();
  return {
    servers: setup.servers.reduce((sum, server) => sum + cpuMs(server.pid), 0),
    postgres: treeCpuMs(postgres.pid),
    devnet: treeCpuMs(devnet.pid),
    client: (client.user + client.system) / 1000,
  };
}

async function paidRound(setup: Setup, devnet: DevnetProcess, postgres: PostgresServer, payloads: PaymentPayload[]): Promise<Round> {
  const urls = setup.servers.map((server) => queryUrl(server.url, FIXED_SQL));
  const before = cpuNow(setup, devnet, postgres);
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < payloads.length) {
        const index = next++;
        latencies.push((await sendPaid(urls[index % urls.length]!, payloads[index]!)).ms);
      }
    }),
  );
  const elapsed = performance.now() - start;
  const after = cpuNow(setup, devnet, postgres);
  const per = (key: keyof CpuShares) => (after[key] - before[key]) / payloads.length;
  return {
    rps: (payloads.length / elapsed) * 1000,
    latencies,
    cpu: { servers: per("servers"), postgres: per("postgres"), devnet: per("devnet"), client: per("client") },
  };
}

export async function measureReplicas(devnet: DevnetProcess, dbPath: string, rounds: number): Promise<SectionResult> {
  const base = {
    server: { base_url: PUBLIC_URL },
    facilitator: { url: devnet.facilitatorUrl },
    database: { sqlite: dbPath },
    tokens: devnet.tokens(),
    tables: [{ name: "fixed_transfers", price_tags: [devnet.tag({ type: "fixed", amount: "0.01" })] }],
  };
  const sqliteDir = freshDir("replicas-sqlite");
  const sqliteConfig = writeConfig(sqliteDir, { ...base, ledger: { path: `${sqliteDir}/ledger.sqlite` } });
  const servers: ChildServer[] = [];
  // Durable commits, as in production and as the SQLite ledger makes them (the test default is fsync off).
  const postgres = await startPostgres({ settings: { fsync: "on", full_page_writes: "on" } });
  try {
    const ledgerUrl = await postgres.createDatabase("arrow402_bench_ledger");
    const postgresConfig = writeConfig(freshDir("replicas-postgres"), { ...base, ledger: { url: ledgerUrl } });
    const start = async (config: string) => {
      const server = await startArrow402(config);
      servers.push(server);
      return server;
    };
    // One after the other: the first replica creates the ledger's schema.
    const setups: Setup[] = [
      { name: "1 replica, SQLite ledger", servers: [await start(sqliteConfig)], postgres: false },
      { name: "2 replicas, PostgreSQL ledger", servers: [await start(postgresConfig), await start(postgresConfig)], postgres: true },
    ];

    const payer = createPayer(devnet.payerKey);
    const offers = await Promise.all(servers.map(async (server) => (await quote(queryUrl(server.url, FIXED_SQL))).required));
    const required = offers[0]!;
    for (const other of offers.slice(1)) {
      if (JSON.stringify(other.accepts) !== JSON.stringify(required.accepts) || other.resource.url !== required.resource.url) {
        throw new Error("the replicas do not make the same offer for the same query; a payment signed for one must be good at every one");
      }
    }
    const sign = async (count: number) => {
      const payloads: PaymentPayload[] = [];
      for (let i = 0; i < count; i++) payloads.push(await payer.sign(required));
      return payloads;
    };
    for (const setup of setups) await paidRound(setup, devnet, postgres, await sign(WARMUP_REQUESTS));
    const results = new Map<Setup, Round[]>(setups.map((setup) => [setup, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? setups : [...setups].reverse();
      for (const setup of order) results.get(setup)!.push(await paidRound(setup, devnet, postgres, await sign(REQUESTS)));
    }

    const rps = (setup: Setup) => median(results.get(setup)!.map((r) => r.rps));
    const fmt = (v: number) => `${v.toFixed(0)} req/s`;
    const [single, pair] = setups as [Setup, Setup];
    return {
      checks: [],
      tables: [
        {
          title: `Replicas (item 6): fixed-price paid requests, ${CONCURRENCY} in flight, ${REQUESTS} distinct payments per round, medians of ${rounds} rounds`,
          rows: [
            ["setup", "paid req/s", "vs 1 replica", "latency p50 / p99", "CPU per request: replicas / PostgreSQL / devnet / client"],
            ...setups.map((setup) => {
              const all = results.get(setup)!;
              const latencies = all.flatMap((r) => r.latencies);
              return [
                setup.name,
                fmt(rps(setup)),
                `${(rps(setup) / rps(single)).toFixed(2)}×`,
                `${ms(median(latencies))} / ${ms(percentile(latencies, 99))}`,
                (["servers", "postgres", "devnet", "client"] as const)
                  .map((key) => (key === "postgres" && !setup.postgres ? "—" : ms(median(all.map((r) => r.cpu[key])))))
                  .join(" / "),
              ];
            }),
          ],
        },
      ],
      details: [
        ...setups.map((setup) => ({ item: "6", name: `${setup.name}: paid req/s runs`, value: runsOf(results.get(setup)!.map((r) => r.rps), fmt) })),
        { item: "6", name: "2 PostgreSQL replicas / 1 SQLite replica (paid req/s)", value: `${(rps(pair) / rps(single)).toFixed(2)}×` },
      ],
    };
  } finally {
    for (const server of servers) await server.stop();
    await postgres.stop();
  }
}
