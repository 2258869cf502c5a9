/**
 * Health checks (ARCHITECTURE.md §11 "Operations"). `GET /healthz` says the process is up and checks
 * nothing else. `GET /readyz` is 200 only when every source of tables answers (`database`, or
 * `database:<name>` for each of several: engines/engine.ts `ping`), the payment
 * store answers `ping()`, and the facilitator's `/supported` lists the `exact` scheme (x402 V2) on
 * every network the config prices in; else 503 naming what is not ready. Both are free and cheap:
 * every check is bounded by a timeout, shared by concurrent probes and remembered for a moment
 * (the facilitator's answer for a few seconds), so a load balancer polling every second costs the
 * facilitator one request every few seconds and the HTTP thread almost nothing.
 */
import { withDeadline } from "../deadline.ts";
import type { TableEngine } from "../engines/engine.ts";
import type { FacilitatorClient } from "../payment/facilitator.ts";
import type { PaymentStore } from "../payment/store.ts";

/** How long each check's result is reused. */
export const CHECK_TTL_MS = { database: 1000, ledger: 1000, facilitator: 5000 } as const;
/** The longest a check may take before it counts as failed. */
export const CHECK_TIMEOUT_MS = 2000;

export type CheckResult = { ok: true } | { ok: false; error: string };

export interface ReadinessReport {
  ready: boolean;
  /** database, ledger, facilitator; and server once shutdown has begun. */
  checks: Record<string, CheckResult>;
}

export interface ReadinessDeps {
  /** The engine of each source, by its name in the config. */
  sources: ReadonlyMap<string, Pick<TableEngine, "ping">>;
  store: Pick<PaymentStore, "ping">;
  facilitator: Pick<FacilitatorClient, "supported">;
  /** CAIP-2 networks the price tags use; the facilitator must settle `exact` on each. */
  networks: string[];
  /** True once shutdown has begun: a draining server is not ready for new work. */
  draining?: () => boolean;
  /** Told when readiness changes (the first report counts as a change only when not ready). */
  onChange?: (ready: boolean, failing: Record<string, string>) => void;
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

export function createReadiness(deps: ReadinessDeps): Readiness {
  // One source is `database`, as it always was; several are `database:<name>` each.
  const sources = [...deps.sources].map(([name, engine]) => ({
    name: deps.sources.size === 1 ? "database" : `database:${name}`,
    check: cached(CHECK_TTL_MS.database, () =>
      bounded(
        engine.ping().then(
          (): CheckResult => ({ ok: true }),
          (error: unknown): CheckResult => ({ ok: false, error: (error as Error).message }),
        ),
        `the source '${name}' did not answer`,
      ),
    ),
  }));
  const ledger = cached(CHECK_TTL_MS.ledger, () =>
    bounded(deps.store.ping().then((): CheckResult => ({ ok: true })), "the payment ledger did not answer"),
  );
  const facilitator = cached(CHECK_TTL_MS.facilitator, () =>
    deps.networks.length === 0 ? Promise.resolve<CheckResult>({ ok: true }) : bounded(checkFacilitator(deps), "the payment facilitator did not answer /supported"),
  );
  let wasReady = true;
  return {
    async check() {
      const [dbs, store, payments] = await Promise.all([Promise.all(sources.map((source) => source.check())), ledger(), facilitator()]);
      const checks: Record<string, CheckResult> = { ...Object.fromEntries(sources.map((source, i) => [source.name, dbs[i]!])), ledger: store, facilitator: payments };
      if (deps.draining?.()) checks.server = { ok: false, error: "shutting down" };
      const failing = Object.fromEntries(Object.entries(checks).flatMap(([name, result]) => (result.ok ? [] : [[name, result.error]])));
      const ready = Object.keys(failing).length === 0;
      if (ready !== wasReady) deps.onChange?.(ready, failing);
      wasReady = ready;
      return { ready, checks };
    },
  };
}

/** The body of `GET /readyz`: what is ready, and for what is not, why. */
export function readinessBody(report: ReadinessReport): Record<string, unknown> {
  const checks = Object.fromEntries(Object.entries(report.checks).map(([name, result]) => [name, result.ok ? "ok" : result.error]));
  return { status: report.ready ? "ready" : "not ready", checks };
}

async function checkFacilitator(deps: ReadinessDeps): Promise<CheckResult> {
  let supported;
  try {
    supported = await deps.facilitator.supported();
  } catch (error) {
    // FacilitatorError messages name the facilitator by origin and path only.
    return { ok: false, error: (error as Error).message };
  }
  const missing = deps.networks.filter(
    (network) => !supported.kinds.some((kind) => kind.scheme === "exact" && kind.network === network && kind.x402Version === 2),
  );
  if (missing.length === 0) return { ok: true };
  return { ok: false, error: `the payment facilitator does not list the exact scheme (x402 V2) on ${missing.join(", ")}` };
}

/** `check`, failed with `message` when it takes longer than CHECK_TIMEOUT_MS or throws. */
function bounded(check: Promise<CheckResult>, message: string): Promise<CheckResult> {
  return withDeadline(
    () => check.catch((): CheckResult => ({ ok: false, error: message })),
    CHECK_TIMEOUT_MS,
    (): CheckResult => ({ ok: false, error: `${message} within ${CHECK_TIMEOUT_MS} ms` }),
  );
}

/** One run at a time, its result reused for `ttlMs` after it ends. */
function cached(ttlMs: number, run: () => Promise<CheckResult>): () => Promise<CheckResult> {
  let last: { result: CheckResult; at: number } | null = null;
  let running: Promise<CheckResult> | null = null;
  return () => {
    if (last !== null && Date.now() - last.at < ttlMs) return Promise.resolve(last.result);
    running ??= run().then((result) => {
      last = { result, at: Date.now() };
      running = null;
      return result;
    });
    return running;
  };
}
