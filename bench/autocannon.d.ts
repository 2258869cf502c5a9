/** The part of autocannon's programmatic API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    headers?: Record<string, string>;
    /** Every response body (decoded as UTF-8, as autocannon reads it) must equal this; others count as mismatches. */
    expectBody?: string;
    /** Like expectBody, as a test (the one usable with `requests`). */
    verifyBody?: (body: string) => boolean;
    /** Requests sent in turn on each connection; `setupRequest` may rewrite one before it is sent. */
    requests?: { setupRequest?: (request: { path: string }) => { path: string } }[];
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    "2xx": number;
    duration: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
