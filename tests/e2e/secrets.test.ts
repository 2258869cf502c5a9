/**
 * Secrets stay private (ARCHITECTURE.md §2 `${VAR}`, §11 `facilitator.cdp`): a facilitator URL holding
 * `user:password@` and a token in its query string, a static Authorization header and a CDP key
 * secret never appear in the discovery document, in an error answered to a buyer, on the server's
 * console, nor in what `arrow402 serve` and `arrow402 validate` print — through the real server and
 * the real command line.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, PAY_TO, tempDir } from "../support/fixtures.ts";
import { encodePayment, paymentRequired } from "../support/paying.ts";
import { payingClient } from "../payment/client.ts";
import { decodePaymentSignature } from "../../src/payment/wire.ts";

const ROOT = join(import.meta.dir, "../..");
const SECRETS = {
  USER: "buyer-s3cret-user",
  PASS: "s3cret-pass",
  TOKEN: "s3cret-token",
  HEADER: "s3cret-header",
  CDP_API_KEY_SECRET: (() => {
    const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }) as { d: string; x: string };
    return Buffer.concat([Buffer.from(jwk.d, "base64url"), Buffer.from(jwk.x, "base64url")]).toString("base64");
  })(),
};
const leaks = (text: string) => Object.values(SECRETS).filter((secret) => text.includes(secret));

let dir: string;
/** A loopback port nothing listens on: every facilitator call fails, and says so. */
let closedPort: number;

beforeAll(() => {
  dir = tempDir("arrow402-secrets-");
  createTypesDatabase(join(dir, "types.sqlite"));
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  closedPort = probe.port!;
  probe.stop(true);
});

/** The two ways an operator passes facilitator credentials; both written with ${VAR}, as the README says. */
const FACILITATORS: [string, () => Record<string, unknown>][] = [
  [
    "user:password@ and a query token in the URL, a static Authorization header",
    () => ({ url: `http://\${USER}:\${PASS}@127.0.0.1:${closedPort}/facilitator?token=\${TOKEN}`, headers: { Authorization: "Bearer ${HEADER}" } }),
  ],
  [
    "a query token in the URL and a CDP key",
    () => ({ url: `http://127.0.0.1:${closedPort}/facilitator/?token=\${TOKEN}`, cdp: { api_key_id: "organizations/o/apiKeys/k", api_key_secret: "${CDP_API_KEY_SECRET}" } }),
  ],
];

function rawConfig(facilitator: Record<string, unknown>) {
  return {
    server: { bind: "127.0.0.1:0" },
    facilitator: { timeout_ms: 2000, ...facilitator },
    database: { sqlite: "types.sqlite" },
    ledger: { path: "ledger.sqlite" },
    tables: [{ name: "items", price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.001" }] }],
  };
}

/** Every console line written while `run` runs (the server runs in this process). */
async function consoleDuring<T>(run: () => Promise<T>): Promise<{ result: T; output: string }> {
  const lines: string[] = [];
  const saved = { log: console.log, error: console.error, warn: console.warn, info: console.info };
  for (const name of Object.keys(saved) as (keyof typeof saved)[]) console[name] = (...args: unknown[]) => void lines.push(args.map((a) => Bun.inspect(a)).join(" "));
  try {
    return { result: await run(), output: lines.join("\n") };
  } finally {
    Object.assign(console, saved);
  }
}

describe.each(FACILITATORS)("%s", (_name, facilitator) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(resolveConfig(rawConfig(facilitator()), { baseDir: dir, env: SECRETS }));
  });
  afterAll(() => server?.stop());

  test("GET /api/ shows the facilitator by scheme, host and path only", async () => {
    const response = await fetch(`${server.url}/api/`);
    const text = await response.text();
    expect(JSON.parse(text).server.facilitator_url).toBe(`http://127.0.0.1:${closedPort}/facilitator`);
    expect(leaks(text)).toEqual([]);
  });

  test("a paid query whose facilitator fails: 500 naming the facilitator without its secrets, nothing on the console either", async () => {
    const url = `${server.url}/api/query?query=${encodeURIComponent("SELECT id FROM items WHERE id <= 3")}`;
    const signed = decodePaymentSignature(await payingClient().sign(await paymentRequired(url)));
    const { result, output } = await consoleDuring(async () => {
      const response = await fetch(url, { headers: { "PAYMENT-SIGNATURE": encodePayment(signed) } });
      return { status: response.status, text: await response.text() };
    });
    expect(result.status).toBe(500);
    expect(result.text).toBe(`The payment facilitator http://127.0.0.1:${closedPort}/facilitator could not be reached for /verify.`);
    expect(leaks(output)).toEqual([]);
  });
});

/** Runs the real command line with the secrets in its environment. */
function cli(args: string[]) {
  const result = Bun.spawnSync(["bun", join(ROOT, "src/main.ts"), ...args], { cwd: dir, env: { ...process.env, ...SECRETS }, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, output: `${result.stdout.toString()}\n${result.stderr.toString()}` };
}

function writeConfig(name: string, raw: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, Bun.YAML.stringify(raw, null, 2));
  return path;
}

describe("the command line", () => {
  test.each(FACILITATORS)("validate, with %s, prints no secret", (_name, facilitator) => {
    const { code, output } = cli(["validate", "--config", writeConfig("valid.yaml", rawConfig(facilitator()))]);
    expect(code).toBe(0);
    expect(output).toContain("OK");
    expect(leaks(output)).toEqual([]);
  });

  test("validate of a config whose facilitator URL is wrong names it without its secrets", () => {
    const raw = rawConfig({ url: "http://${USER}:${PASS}@127.0.0.1:1/facilitator?token=${TOKEN}#${HEADER}" });
    const { code, output } = cli(["validate", "--config", writeConfig("invalid.yaml", raw)]);
    expect(code).toBe(2);
    expect(output).toContain('facilitator.url: "http://127.0.0.1:1/facilitator" is not an http(s) URL without fragment');
    expect(leaks(output)).toEqual([]);
  });

  test.each(FACILITATORS)("serve, with %s: the start-up line names no secret", async (_name, facilitator) => {
    const proc = Bun.spawn(["bun", join(ROOT, "src/main.ts"), "serve", "--config", writeConfig("serve.yaml", rawConfig(facilitator()))], {
      cwd: dir,
      env: { ...process.env, ...SECRETS },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let output = "";
      const deadline = Date.now() + 20_000;
      while (!output.includes("\n") && Date.now() < deadline) {
        const { done, value } = await reader.read();
        if (done) break;
        output += new TextDecoder().decode(value);
      }
      expect(output).toMatch(/serving 1 table\(s\) from .*serve\.yaml on http:\/\/127\.0\.0\.1:\d+/);
      const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
      const discovery = await (await fetch(`${url}/api/`)).text();
      expect(leaks(output + discovery)).toEqual([]);
    } finally {
      proc.kill();
      await proc.exited;
    }
    expect(leaks(await new Response(proc.stderr).text())).toEqual([]);
  });
});
