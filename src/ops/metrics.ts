/**
 * The metrics of ARCHITECTURE.md §11 "Operations", built only from events (events.ts): the routes and
 * the payment core never touch a counter. Labels come from bounded sets — route labels
 * (routes.ts), status codes, configured tables, networks and assets, the payment core's refusal
 * reasons — so no client input can create a series.
 */
import type { OpsEvent } from "./events.ts";
import { Counter, Gauge, Histogram, Registry } from "./prometheus.ts";

/** Request latency buckets in seconds: a small read takes a millisecond, a paid one seconds, an export minutes. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Readings taken at scrape time from parts that keep their own state. */
export interface MetricsSources {
  version: string;
  /** Requests whose handling or body has not finished. */
  inFlight?: () => number;
  /** Query workers terminated and replaced (engines/sqlite/pool.ts `replace`). */
  workersRestarted?: () => number;
  /** Bytes waiting in spill files (results/spill.ts): stalled readers' responses, held paid results. */
  spillBytes?: () => number;
  /** Bytes written to spill files since start. */
  spilledBytes?: () => number;
  /** Bytes of complete answers not yet taken by their clients (results/sent-body.ts). */
  unsentBytes?: () => number;
  /** The source (databases:) and engine of a served table, for the per-source series. */
  sourceOf?: (table: string) => { source: string; engine: string } | undefined;
  /** Queries answered from the result cache, and the bytes it holds (results/result-cache.ts). */
  resultCacheHits?: () => number;
  resultCacheBytes?: () => number;
}

export interface Metrics {
  observe(event: OpsEvent): void;
  render(): string;
}

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  const requests = registry.add(new Counter("arrow402_http_requests_total", "HTTP requests by route label and status code.", ["route", "status"]));
  const duration = registry.add(
    new Histogram("arrow402_http_request_duration_seconds", "Time from a request's arrival to the end of its response body.", DURATION_BUCKETS, ["route"]),
  );
  const responseBytes = registry.add(new Counter("arrow402_http_response_bytes_total", "Response body bytes sent, by route label.", ["route"]));
  const rows = registry.add(new Counter("arrow402_rows_served_total", "Rows delivered in query results sent to their end, by table.", ["table"]));
  const dataBytes = registry.add(new Counter("arrow402_bytes_served_total", "Query result bytes delivered, by table.", ["table"]));
  const sourceRows = registry.add(new Counter("arrow402_source_rows_served_total", "Rows delivered, by the source (databases:) and engine that read them.", ["source", "engine"]));
  const sourceErrors = registry.add(
    new Counter("arrow402_source_query_errors_total", "Queries that failed with a server error (5xx), by the source and engine of their table.", ["source", "engine"]),
  );
  const settled = registry.add(
    new Counter("arrow402_payments_settled_total", "Payments delivered, by table, token and how (settlement, replay, recovery).", ["table", "network", "asset", "via"]),
  );
  const revenue = registry.add(
    new Counter(
      "arrow402_revenue_total",
      "Money received in the token's smallest units (new settlements and settlements recovered from the chain; replays add nothing).",
      ["table", "network", "asset"],
    ),
  );
  const refused = registry.add(new Counter("arrow402_payments_refused_total", "402 answers by table and reason.", ["table", "reason"]));
  const facilitatorErrors = registry.add(
    new Counter("arrow402_facilitator_errors_total", "Facilitator calls that failed (unreachable, timed out, 5xx, malformed), by endpoint.", ["endpoint"]),
  );
  const ledgerAlerts = registry.add(
    new Counter("arrow402_ledger_alerts_total", "Settled payments the ledger could not record: each needs an operator (see the error log line)."),
  );
  const reloads = registry.add(new Counter("arrow402_config_reloads_total", "SIGHUP config reloads, by result (applied, rejected).", ["result"]));
  // Series an alert rule watches exist from the start, at 0.
  ledgerAlerts.inc({}, 0);
  for (const endpoint of ["verify", "settle"]) facilitatorErrors.inc({ endpoint }, 0);
  registry.add(new Gauge("arrow402_info", "The running arrow402 version.", () => 1, "gauge", { version: sources.version }));
  if (sources.inFlight) registry.add(new Gauge("arrow402_http_requests_in_flight", "Requests being handled or still sending their body.", sources.inFlight));
  if (sources.workersRestarted) registry.add(new Gauge("arrow402_query_workers_restarted_total", "Query workers terminated and replaced: a query over its time limit, or one that did not stop when its client left.", sources.workersRestarted, "counter"));
  if (sources.spillBytes) registry.add(new Gauge("arrow402_spill_bytes", "Bytes waiting in spill files: stalled readers' responses, paid results held for settlement or their buyer.", sources.spillBytes));
  if (sources.unsentBytes) registry.add(new Gauge("arrow402_unsent_bytes", "Bytes of complete answers held in memory for clients that have not read them yet (limits.unsent_budget_mb).", sources.unsentBytes));
  if (sources.spilledBytes) registry.add(new Gauge("arrow402_spilled_bytes_total", "Bytes written to spill files since start (disk writes a client reading at once would not cause).", sources.spilledBytes, "counter"));
  if (sources.resultCacheHits) registry.add(new Gauge("arrow402_result_cache_hits_total", "Queries answered with the bytes of an earlier answer (same query, format and data).", sources.resultCacheHits, "counter"));
  if (sources.resultCacheBytes) registry.add(new Gauge("arrow402_result_cache_bytes", "Bytes of small results kept to answer repeated queries, with what their entries cost (keys, queries).", sources.resultCacheBytes));
  registry.add(new Gauge("process_resident_memory_bytes", "Resident memory size in bytes.", () => process.memoryUsage.rss()));

  function observe(event: OpsEvent): void {
    switch (event.type) {
      case "request.finished": {
        requests.inc({ route: event.route, status: String(event.status) });
        duration.observe({ route: event.route }, event.durationMs / 1000);
        if (event.bytes !== null) responseBytes.inc({ route: event.route }, event.bytes);
        // Rows are known only for data sent to its end (a query result, whatever the route).
        const source = event.table === null ? undefined : sources.sourceOf?.(event.table);
        if (event.table !== null && event.status === 200 && event.rows !== null) {
          rows.inc({ table: event.table }, event.rows);
          if (event.bytes !== null) dataBytes.inc({ table: event.table }, event.bytes);
          if (source !== undefined) sourceRows.inc(source, event.rows);
        }
        if (source !== undefined && event.status >= 500 && event.status !== 503) sourceErrors.inc(source);
        return;
      }
      case "payment.settled": {
        const token = { table: event.table, network: event.network, asset: event.asset };
        settled.inc({ ...token, via: event.via });
        if (event.via !== "replay") revenue.inc(token, event.amount);
        return;
      }
      case "payment.refused":
        refused.inc({ table: event.table, reason: event.reason });
        return;
      case "facilitator.error":
        facilitatorErrors.inc({ endpoint: event.endpoint });
        return;
      case "ledger.alert":
        ledgerAlerts.inc();
        return;
      case "config.reloaded":
        reloads.inc({ result: "applied" });
        return;
      case "config.rejected":
        reloads.inc({ result: "rejected" });
        return;
    }
  }

  return { observe, render: () => registry.render() };
}
