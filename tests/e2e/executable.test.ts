/**
 * The single executable (ARCHITECTURE.md §1): `bun run build` produces dist/arrow402, which runs every
 * command from an empty temporary directory with no node_modules beside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { copyFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { decodePaymentSignature, encodeHeaderJson } from "../../src/payment/wire.ts";
import { payingClient } from "../payment/client.ts";
import { PAY_TO, tempDir } from "../support/fixtures.ts";
import { usePostgres } from "../support/postgres.ts";
import { SQL } from "bun";

let dir: string;
let exe: string;

beforeAll(() => {
  const build = Bun.spawnSync(["bun", "run", "build"], { cwd: join(import.meta.dir, "../.."), stderr: "pipe", stdout: "pipe" });
  if (build.exitCode !== 0) throw new Error(`bun run build failed: ${build.stderr.toString()}`);
  dir = tempDir("arrow402-exe-");
  exe = join(dir, "arrow402");
  copyFileSync(join(import.meta.dir, "../../dist/arrow402"), exe);
  Bun.spawnSync(["chmod", "+x", exe]);
  expect(existsSync(join(dir, "node_modules"))).toBe(false);
}, 120_000);

function run(args: string[], cwd = dir) {
  const result = Bun.spawnSync([exe, ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin" } });
  return { code: result.exitCode, out: result.stdout.toString(), err: result.stderr.toString() };
}

describe("commands", () => {
  test("version and help", () => {
    const pkg = require("../../package.json");
    expect(run(["version"])).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    const help = run(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["serve", "dashboards", "validate", "payments", "version"]) expect(help.out).toContain(`arrow402 ${command}`);
  });

  test("bad usage exits 2 with one readable line", () => {
    const bad = run(["frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("unknown command 'frobnicate'");
    expect(run(["serve", "--nope"]).code).toBe(2);
  });

  test("validate reports config problems with their paths, and bad stored values with their rowid", async () => {
    const work = tempDir("arrow402-validate-");
    const db = new Database(join(work, "data.sqlite"), { create: true });
    db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, day DATE)");
    db.run("INSERT INTO t VALUES (1, 5, '2026-01-01'), (2, 'five', '2026-02-30')");
    db.close();
    await Bun.write(join(work, "good.yaml"), "database: { sqlite: data.sqlite }\ntables:\n  - { name: t, description: T }\n");
    const valuesBad = run(["validate", "--config", "good.yaml"], work);
    expect(valuesBad.code).toBe(2);
    expect(valuesBad.err).toContain("tables[0] (t).n: rowid 2");
    expect(valuesBad.err).toContain("tables[0] (t).day: rowid 2");
    await Bun.write(
      join(work, "bad.yaml"),
      `database: { sqlite: data.sqlite }\ntables:\n  - name: t\n    description: T\n    colour: red\n    price_tags:\n      - { type: per_row, pay_to: "${PAY_TO}", token: usdc/base, amount_per_item: "0.0000001" }\n`,
    );
    const configBad = run(["validate", "--config", "bad.yaml"], work);
    expect(configBad.code).toBe(2);
    expect(configBad.err).toContain("tables[0].colour");
    expect(configBad.err).toContain("tables[0].price_tags[0].amount_per_item");
    const fixed = new Database(join(work, "data.sqlite"));
    fixed.run("UPDATE t SET n = 6, day = '2026-02-28' WHERE id = 2");
    fixed.close();
    const ok = run(["validate", "--config", "good.yaml"], work);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("OK");
  });
});

describe("serve (the demo, no config)", () => {
  let proc: ReturnType<typeof Bun.spawn>;
  let url: string;

  beforeAll(async () => {
    proc = Bun.spawn([exe, "serve", "--bind", "127.0.0.1:0"], { cwd: dir, stdout: "pipe", stderr: "inherit" });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!/on (http:\/\/\S+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve exited: ${text}`);
      text += new TextDecoder().decode(value);
    }
    url = /on (http:\/\/\S+)/.exec(text)![1]!;
  }, 120_000);
  afterAll(() => proc.kill());

  test("serves discovery, a free table as Arrow, and a 402 for the paid table with no network", async () => {
    const doc = await (await fetch(`${url}/api/`)).json();
    expect(doc.tables.map((t: { name: string }) => t.name)).toEqual(["swaps", "tokens"]);
    const free = await fetch(`${url}/api/query?query=${encodeURIComponent("SELECT symbol, decimals FROM tokens")}`);
    expect(free.status).toBe(200);
    expect(tableFromIPC(new Uint8Array(await free.arrayBuffer())).numRows).toBeGreaterThan(3);
    const paid = await fetch(`${url}/api/query?query=${encodeURIComponent("SELECT * FROM swaps LIMIT 10")}`);
    expect(paid.status).toBe(402);
    const body = await paid.json();
    expect(body.accepts[0]).toMatchObject({ network: "eip155:84532", amount: "1000" });
    expect(body.resource.description).toEndWith(" - 10 rows");
  });

  test("checks a payment's signature itself (libsecp256k1 in WebAssembly, carried inside the executable)", async () => {
    const target = `${url}/api/query?query=${encodeURIComponent("SELECT * FROM swaps LIMIT 10")}`;
    const required = await (await fetch(target)).json();
    const payer = payingClient();
    const signed = await payer.sign(required);
    // The same authorization with a valid signature by another key: it must not recover to `from`.
    const other = decodePaymentSignature(await payingClient().sign(required));
    const forged = decodePaymentSignature(signed);
    forged.payload.signature = other.payload.signature;
    const refused = await fetch(target, { headers: { "payment-signature": encodeHeaderJson(forged) } });
    expect(refused.status).toBe(402);
    expect((await refused.json()).error).toContain("the signature was not made by the authorization's `from`");
    // The genuine one passes the local checks and goes on to the facilitator, which this machine
    // cannot reach: an error about the facilitator, not about the signature.
    const genuine = await fetch(target, { headers: { "payment-signature": signed } });
    const text = await genuine.text();
    expect(text).not.toContain("cannot pay this offer");
    expect(text).toContain("facilitator");
  }, 60_000);

  test("accepts paid queries whose signed retry carries a long URL twice (request headers up to 64 KiB)", async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => i * 7 + 1);
    const sql = `SELECT * FROM swaps WHERE id IN (${ids.join(", ")})`;
    const target = `${url}/api/query?query=${encodeURIComponent(sql)}`;
    expect(target.length).toBeGreaterThan(8000);
    const res = await fetch(target);
    // With Bun's default 16 KiB header limit the quote would be refused (400): its paid retry could not fit.
    expect(res.status).toBe(402);
    const big = await fetch(`${url}/api/`, { headers: { "x-padding": "a".repeat(40_000) } });
    expect(big.status).toBe(200);
  });

  test("a query over max_query_bytes is a 400 naming the limit, not a 431", async () => {
    const sql = `SELECT symbol FROM tokens WHERE name = '${"x".repeat(20_000)}'`;
    const res = await fetch(`${url}/api/query?query=${encodeURIComponent(sql)}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("(max_query_bytes) is 16384 bytes");
  });

  test("the demo has a few hundred thousand swaps", async () => {
    const res = await fetch(`${url}/api/query?query=${encodeURIComponent("SELECT id FROM swaps")}`);
    expect(res.status).toBe(402);
    const rows = Number(/ - (\d+) rows$/.exec((await res.json()).resource.description)![1]);
    expect(rows).toBeGreaterThanOrEqual(200_000);
  });

  test("shows the landing page and a generated dashboard", async () => {
    const landing = await fetch(`${url}/`);
    expect(landing.status).toBe(200);
    const html = await landing.text();
    expect(html).toContain('href="/dex/');
    const dashboard = await fetch(`${url}/dex/`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.headers.get("content-type")).toContain("text/html");
    expect((await fetch(`${url}/dex/snapshot.arrow`)).status).toBe(200);
  });

  test("a browser's navigation to a paid query gets the paywall page, whose checkout script the executable carries", async () => {
    const target = `${url}/api/query?query=${encodeURIComponent("SELECT * FROM swaps LIMIT 10")}`;
    const page = await fetch(target, { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });
    expect(page.status).toBe(402);
    expect(page.headers.get("payment-required")).toBe((await fetch(target)).headers.get("payment-required"));
    expect(await page.text()).toContain('<script type="module" src="/api/checkout.js"></script>');
    const script = await fetch(`${url}/api/checkout.js`);
    expect(script.status).toBe(200);
    const bundle = await script.text();
    expect(bundle).toContain("eth_signTypedData_v4");
    expect(bundle).toBe(await (await fetch(`${url}/dex/checkout.js`)).text());
  });
});

describe("serve, a SQLite and a PostgreSQL source (nothing beside the executable)", () => {
  const pg = usePostgres();
  let proc: ReturnType<typeof Bun.spawn>;
  let url: string;

  beforeAll(async () => {
    const admin = new SQL(pg.url);
    await admin.unsafe("CREATE TABLE prices (id bigint PRIMARY KEY, at timestamptz, price numeric(10,2)); INSERT INTO prices VALUES (1, '2024-01-02 03:04:05.123456+00', 12.50), (2, NULL, -0.01);");
    await admin.close();
    const work = tempDir("arrow402-exe-pg-");
    const db = new Database(join(work, "local.sqlite"), { create: true });
    db.run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'local')");
    db.close();
    await Bun.write(
      join(work, "arrow402.yaml"),
      `server: { bind: "127.0.0.1:0" }\ndatabases:\n  local: { sqlite: local.sqlite }\n  warehouse: { postgres: "${pg.url}" }\ntables:\n  - { name: notes, database: local }\n  - { name: prices, database: warehouse }\n`,
    );
    proc = Bun.spawn([exe, "serve"], { cwd: work, stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin" } });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!/on (http:\/\/\S+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the executable exited: ${text}${await new Response(proc.stderr as ReadableStream<Uint8Array>).text()}`);
      text += new TextDecoder().decode(value);
    }
    url = /on (http:\/\/\S+)/.exec(text)![1]!;
  }, 60_000);
  afterAll(() => proc?.kill());

  test("both tables answer: decimals and µs timestamps exact from PostgreSQL", async () => {
    const pgTable = tableFromIPC(new Uint8Array(await (await fetch(`${url}/api/query?query=${encodeURIComponent("SELECT id, at, price FROM prices ORDER BY id")}`)).arrayBuffer()));
    expect(pgTable.getChild("id")!.toArray()).toEqual(new BigInt64Array([1n, 2n]));
    const csv = await (await fetch(`${url}/api/query?query=${encodeURIComponent("SELECT at, price FROM prices ORDER BY id")}&format=csv`)).text();
    expect(csv).toBe("at,price\r\n2024-01-02T03:04:05.123456Z,12.50\r\n,-0.01\r\n");
    const local = tableFromIPC(new Uint8Array(await (await fetch(`${url}/api/query?query=${encodeURIComponent("SELECT body FROM notes")}`)).arrayBuffer()));
    expect(local.getChild("body")!.get(0)).toBe("local");
  });
});

describe("serve, Parquet files through DuckDB (nothing beside the executable)", () => {
  let proc: ReturnType<typeof Bun.spawn>;
  let url: string;
  let work: string;

  beforeAll(async () => {
    work = tempDir("arrow402-exe-duckdb-");
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const duck = await DuckDBInstance.create(":memory:");
    const writer = await duck.connect();
    await writer.run(
      `COPY (SELECT x AS id, 'p' || x AS pair, (x * 1.25)::DECIMAL(10,2) AS price FROM range(1, 101) t(x)) TO '${join(work, "swaps.parquet")}' (FORMAT parquet)`,
    );
    writer.closeSync();
    duck.closeSync();
    await Bun.write(join(work, "arrow402.yaml"), `server: { bind: "127.0.0.1:0" }\ndatabases:\n  lake: { duckdb: ":memory:" }\ntables:\n  - { name: swaps, files: ./*.parquet }\n`);
    // No HOME, no node_modules: the native library goes to the folder ARROW402_CACHE_DIR names.
    proc = Bun.spawn([exe, "serve"], { cwd: work, stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin", ARROW402_CACHE_DIR: join(work, "cache") } });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!/on (http:\/\/\S+)/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the executable exited: ${text}${await new Response(proc.stderr as ReadableStream<Uint8Array>).text()}`);
      text += new TextDecoder().decode(value);
    }
    url = /on (http:\/\/\S+)/.exec(text)![1]!;
  }, 60_000);
  afterAll(() => proc?.kill());

  test("a Parquet table answers; DuckDB's library was unpacked to ARROW402_CACHE_DIR", async () => {
    const sql = "SELECT id, pair, price FROM swaps WHERE id > 98 ORDER BY id";
    const table = tableFromIPC(new Uint8Array(await (await fetch(`${url}/api/query?query=${encodeURIComponent(sql)}`)).arrayBuffer()));
    expect(table.getChild("id")!.toArray()).toEqual(new BigInt64Array([99n, 100n]));
    expect([...table.getChild("pair")!]).toEqual(["p99", "p100"]);
    const csv = await (await fetch(`${url}/api/query?query=${encodeURIComponent(sql)}&format=csv`)).text();
    expect(csv).toBe("id,pair,price\r\n99,p99,123.75\r\n100,p100,125.00\r\n");
    const unpacked = readdirSync(join(work, "cache"));
    expect(unpacked).toEqual([expect.stringMatching(/^duckdb-.+-linux-x64$/)]);
    expect(readdirSync(join(work, "cache", unpacked[0]!)).sort()).toEqual(["duckdb.node", "libduckdb.so"]);
  });
});
