/**
 * The devnet (anvil, the EIP-3009 test token, the x402 facilitator) as a process of its own, so
 * that the facilitator's CPU is neither the client's nor a server's: `bun bench/devnet-process.ts`.
 * Prints one `devnet {json}` line (see DevnetInfo), then one `facilitator: …` line per /verify and
 * /settle, and stops the chain when it is signalled or when its stdin closes (the bench is gone).
 */
import { startDevnet } from "../devnet/index.ts";

export interface DevnetInfo {
  facilitatorUrl: string;
  payerKey: `0x${string}`;
  unfundedKey: `0x${string}`;
  payTo: string;
  token: { key: string; chain: string; address: string; name: string; version: string; decimals: number };
}

/** Enough test tokens for every paid request of a run (the per_row purchases cost ~1 token each). */
const PAYER_TOKENS = 100_000n;

const devnet = await startDevnet({
  payerBalance: PAYER_TOKENS * 10n ** 6n,
  log: (line) => console.log(`facilitator: ${line}`),
});
let stopping = false;
async function stop(): Promise<never> {
  if (!stopping) {
    stopping = true;
    await devnet.stop();
  }
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());

const info: DevnetInfo = {
  facilitatorUrl: devnet.facilitatorUrl,
  payerKey: devnet.payer.privateKey,
  unfundedKey: devnet.unfunded.privateKey,
  payTo: devnet.payTo,
  token: devnet.tokenConfig(),
};
console.log(`devnet ${JSON.stringify(info)}`);
for await (const _ of Bun.stdin.stream());
await stop();
