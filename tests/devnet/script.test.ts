/**
 * `bun run devnet` end to end: the script starts the sandbox, writes a config that arrow402's
 * own loader accepts and that points at a facilitator which answers, and stops the chain on
 * Ctrl-C (SIGINT).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { devnetConfigYaml } from "../../devnet/config.ts";

const ROOT = join(import.meta.dir, "..", "..");

describe("devnet config", () => {
  test("the generated YAML resolves with arrow402's config loader, priced in the devnet token", () => {
    const payTo = "0x467803074567c3eA074c0691d20b0b185F39a5Ff";
    const yaml = devnetConfigYaml({
      facilitatorUrl: "http://127.0.0.1:48100",
      rpcUrl: "http://127.0.0.1:48101",
      payTo,
      token: {
        key: "usdc/devnet",
        chain: "31337",
        address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        name: "Test USD Coin",
        version: "2",
        decimals: 6,
      },
    });
    const config = resolveConfig(Bun.YAML.parse(yaml), { baseDir: "/srv/app", env: {} });
    expect(config.facilitator.url).toBe("http://127.0.0.1:48100");
    expect(config.rpcUrls[31337]).toBe("http://127.0.0.1:48101");
    expect(config.databases.main).toEqual({ engine: "sqlite", path: "/srv/app/.arrow402/demo/demo.sqlite" });
    expect(config.tables.map((t) => t.name)).toEqual(["swaps", "tokens"]);
    const [swaps, tokens] = config.tables;
    expect(tokens?.priceTags).toEqual([]);
    expect(swaps?.priceTags.map((tag) => [tag.type, tag.payTo, tag.token.network, tag.token.name])).toEqual([
      ["per_row", payTo, "eip155:31337", "Test USD Coin"],
      ["per_row", payTo, "eip155:31337", "Test USD Coin"],
    ]);
    const perRow = swaps?.priceTags.filter((tag) => tag.type === "per_row") ?? [];
    expect(perRow.map((tag) => [tag.amountPerItem, tag.minItems])).toEqual([
      [100n, undefined],
      [50n, 10000],
    ]);
  });
});

describe("bun run devnet", () => {
  test("writes a working config, and Ctrl-C stops the chain and the facilitator", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arrow402-devnet-script-"));
    const file = join(dir, "arrow402.yaml");
    const child = Bun.spawn(["bun", join(ROOT, "scripts", "devnet.ts"), "--write", file], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "inherit",
    });
    try {
      const reader = child.stdout.getReader();
      let output = "";
      while (!output.includes("config written to")) {
        const { value, done } = await reader.read();
        if (done) break;
        output += new TextDecoder().decode(value);
      }
      expect(output).toContain("config written to");
      const rpcUrl = /chain RPC\s+(\S+)/.exec(output)?.[1] ?? "";
      const config = resolveConfig(Bun.YAML.parse(readFileSync(file, "utf8")), { baseDir: dir, env: {} });
      expect(config.databases.main).toEqual({ engine: "sqlite", path: join(ROOT, ".arrow402", "demo", "demo.sqlite") });
      const supported = (await (await fetch(`${config.facilitator.url}/supported`)).json()) as { kinds: unknown[] };
      expect(supported.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: "eip155:31337" }]);
      expect(output).toContain(String(config.tables[0]?.priceTags[0]?.token.address));

      child.kill("SIGINT");
      expect(await child.exited).toBe(0);
      await expect(fetch(`${config.facilitator.url}/supported`)).rejects.toThrow();
      await expect(
        fetch(rpcUrl, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) }),
      ).rejects.toThrow();
    } finally {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
