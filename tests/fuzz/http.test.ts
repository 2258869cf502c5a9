/**
 * Fuzzing every route with raw requests (DESIGN.md §7, §8, §11): paths with dot segments, encoded
 * slashes, odd bytes and great lengths, methods, `Accept`, `Accept-Encoding`, `Origin`, `Host`,
 * repeated and malformed headers, against the in-process servers and an `arrow402 serve`
 * subprocess (a crash shows as a dead process). Besides the documented statuses and shapes: no
 * path reaches a file outside the dashboards folder, and an ordinary Host name never changes
 * which route answers.
 */
import { afterAll, beforeAll, test } from "bun:test";
import { startEnvironment, type FuzzEnvironment } from "./environment.ts";
import { httpRequest } from "./http-gen.ts";
import { exchange, type Exchange, type FuzzRequest } from "./raw-http.ts";
import { fuzzSettings, share } from "./random.ts";
import { FuzzRun, type FuzzCase } from "./runner.ts";
import { sqlText } from "./sql-gen.ts";
import type { FuzzServer } from "./environment.ts";

const settings = fuzzSettings();
const COUNT = share(settings, 0.25);
let env: FuzzEnvironment;

beforeAll(async () => {
  env = await startEnvironment({ process: true });
}, 60_000);
afterAll(() => env?.stop());

/** A host name, IPv4 address or bracketed IPv6 address, with an optional port: what a real client sends. */
const ORDINARY_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

function ordinaryHost(value: string): boolean {
  const match = ORDINARY_HOST.exec(value);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}

/**
 * When an ordinary Host that is not the server's own got a bare 404, the same request with the
 * server's own Host must get one too: the Host header names the server, it does not pick the route.
 */
function sameRouteWithRealHost(server: FuzzServer, request: FuzzRequest) {
  return async (result: Exchange): Promise<string[]> => {
    const hosts = request.headers.filter(([name]) => name.toLowerCase() === "host");
    if (hosts.length !== 1 || !ordinaryHost(hosts[0]![1]) || hosts[0]![1] === server.origin.host) return [];
    if (result.kind !== "response" || result.response.status !== 404) return [];
    const again = await exchange(server.origin, { ...request, noHost: false, headers: request.headers.filter(([name]) => name.toLowerCase() !== "host") }, server.boundMs);
    if (again.kind === "response" && again.response.status === 404) return [];
    const status = again.kind === "response" ? again.response.status : again.kind;
    return [`404 with Host ${JSON.stringify(hosts[0]![1])}, but ${status} with the server's own Host: the Host header changed the route`];
  };
}

test(`raw requests on every route get documented answers in time, and the subprocess survives (${COUNT} requests, seed ${settings.seed})`, async () => {
  const run = new FuzzRun("http", settings, env);
  const tables = env.catalog.tables.map((table) => table.name);
  await run.run(COUNT, (rng): FuzzCase => {
    const server = rng.weighted<FuzzServer>([
      [5, env.main],
      [2, env.tight],
      [3, env.process!],
    ]);
    const request = httpRequest(rng, server.origin.host, server.slugs, tables, () => sqlText(rng, env.catalog).sql);
    return { kind: `http/${request.method.length > 8 ? "long-method" : request.method}`, server, request, extra: sameRouteWithRealHost(server, request) };
  });
  run.checkProcessLog();
  console.log(`http fuzz, seed ${settings.seed}: ${run.summary()}`);
  run.assertClean();
}, 600_000);
