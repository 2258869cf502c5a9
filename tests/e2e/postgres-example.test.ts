/**
 * The README's PostgreSQL example runs as written (`bun run example:postgres`,
 * scripts/postgres-example.ts): its own PostgreSQL, the demo's rows in PostgreSQL types, a read-only
 * role whose password comes from ${PG_PASSWORD}, and arrow402 serving both tables.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tableFromIPC } from "apache-arrow";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/fixtures.ts";

const SCRIPT = join(import.meta.dir, "../../scripts/postgres-example.ts");
let proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
let url: string;
let work: string;
let pgPort: number;

beforeAll(async () => {
  work = tempDir("arrow402-pg-example-");
  proc = Bun.spawn([process.execPath, SCRIPT, "--bind", "127.0.0.1:0", "--rows", "3000"], { cwd: work, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!/ on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the example exited: ${text}${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
  }
  url = / on (http:\/\/\S+)/.exec(text)![1]!;
  pgPort = Number(/PostgreSQL on 127\.0\.0\.1:(\d+)/.exec(text)![1]);
  reader.releaseLock();
}, 120_000);
afterAll(() => proc?.kill("SIGKILL"));

const query = (sql: string, format = "arrow") => fetch(`${url}/api/query?query=${encodeURIComponent(sql)}&format=${format}`);

describe("bun run example:postgres", () => {
  test("the config it writes reads PostgreSQL as a read-only role, its password from ${PG_PASSWORD}", () => {
    const config = readFileSync(join(work, ".arrow402/postgres-example/arrow402.yaml"), "utf8");
    expect(config).toContain("postgres: postgres://reader:${PG_PASSWORD}@127.0.0.1:");
    expect(config).toContain("source: swaps_v2");
  });

  test("the free table answers with PostgreSQL's types: numeric(18,6) as Decimal128, exact", async () => {
    const response = await query("SELECT symbol, price_usd, is_stable FROM tokens WHERE symbol = 'DAI'");
    expect(response.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(String(table.schema.fields[1]!.type)).toBe("Decimal[18e+6]");
    const document = (await (await fetch(`${url}/api/table/tokens`)).json()) as { schema: { fields: { name: string; metadata?: Record<string, string> }[] } };
    expect(document.schema.fields.find((field) => field.name === "price_usd")?.metadata?.source_type).toBe("numeric(18,6)");
    expect(await (await query("SELECT symbol, price_usd, is_stable FROM tokens WHERE symbol = 'DAI'", "csv")).text()).toBe("symbol,price_usd,is_stable\r\nDAI,0.999800,true\r\n");
  });

  test("the paid table is quoted from a PostgreSQL count", async () => {
    const response = await query("SELECT id, block_time, amount_usd FROM swaps WHERE fee_bps = 5");
    expect(response.status).toBe(402);
    const body = (await response.json()) as { resource: { description: string } };
    const count = Number(/- (\d+) rows/.exec(body.resource.description)![1]);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(3000);
  });

  test("Ctrl-C stops arrow402 and the PostgreSQL server it started", async () => {
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    const refused = await Bun.connect({ hostname: "127.0.0.1", port: pgPort, socket: { data() {} } }).then(
      (socket) => (socket.end(), false),
      () => true,
    );
    expect(refused).toBe(true);
  }, 30_000);
});
