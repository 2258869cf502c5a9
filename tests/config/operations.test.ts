/**
 * The operations keys of `server:` (ARCHITECTURE.md §11): `metrics`, `metrics_token` (with `${VAR}`),
 * `log` and `shutdown_ms` — defaults, accepted values, and every problem reported with its path.
 */
import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/config/load.ts";
import { minimal } from "./examples.ts";
import { expectProblem, problemsOf } from "./support.ts";

const resolve = (server: Record<string, unknown>, env: Record<string, string> = {}) => resolveConfig(minimal({ server }), { baseDir: "/srv/arrow402", env }).server;

describe("accepted", () => {
  test("defaults: no metrics, text logs, 10 s to drain", () => {
    expect(resolve({})).toMatchObject({ metrics: false, metricsToken: null, log: "text", shutdownMs: 10_000 });
  });

  test("metrics with a token from the environment, json logs, no drain wait", () => {
    const server = resolve({ metrics: true, metrics_token: "${METRICS_TOKEN}", log: "json", shutdown_ms: 0 }, { METRICS_TOKEN: "tok" });
    expect(server).toMatchObject({ metrics: true, metricsToken: "tok", log: "json", shutdownMs: 0 });
  });
});

describe("refused, with the path and what to write", () => {
  test.each<[string, Record<string, unknown>, string, string]>([
    ["metrics not a boolean", { metrics: "yes" }, "server.metrics", "write true or false"],
    ["a token without metrics", { metrics_token: "tok" }, "server.metrics_token", "set server.metrics: true"],
    ["an empty token", { metrics: true, metrics_token: "" }, "server.metrics_token", "must not be empty"],
    ["an unknown log format", { log: "yaml" }, "server.log", "write text (for humans) or json"],
    ["a negative drain time", { shutdown_ms: -1 }, "server.shutdown_ms", "at least 0"],
    ["a fractional drain time", { shutdown_ms: 1.5 }, "server.shutdown_ms", "whole number"],
  ])("%s", (_name, server, path, fragment) => {
    expectProblem(problemsOf(minimal({ server })), path, fragment);
  });

  test("a token variable that is not set is a problem, not an open /metrics", () => {
    const problems = problemsOf(minimal({ server: { metrics: true, metrics_token: "${METRICS_TOKEN}" } }));
    expect(problems).toContain("server.metrics_token: environment variable METRICS_TOKEN is not set; set it or remove ${METRICS_TOKEN} from the config");
  });

  test("a token variable set to nothing is a problem, not an open /metrics", () => {
    expectProblem(problemsOf(minimal({ server: { metrics: true, metrics_token: "${METRICS_TOKEN}" } }), { METRICS_TOKEN: "" }), "server.metrics_token", "must not be empty");
  });

  test.each(["healthz", "readyz", "metrics"])("the dashboard slug %s is reserved", (slug) => {
    expectProblem(problemsOf(minimal({ dashboards: { entries: [{ slug, title: "D", table: "items" }] } })), "dashboards.entries[0].slug", "reserved");
  });
});
