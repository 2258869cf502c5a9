/**
 * `bun run devnet`: starts the local paid sandbox (chain, test token, x402 facilitator), prints
 * an arrow402 config that uses it and a funded payer, and runs until Ctrl-C.
 *
 *   bun run devnet [--port N] [--write FILE]
 *
 * --port N     facilitator on port N and chain RPC on N+1, so a saved config stays valid across
 *              restarts (the token address and accounts are the same on every run).
 * --write FILE also write the config to FILE (database and ledger paths made relative to it).
 */
import { existsSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEMO_DATABASE_PATH, DEVNET_LEDGER_PATH, devnetConfigYaml } from "../devnet/config.ts";
import { startDevnet } from "../devnet/index.ts";
import { createDemoDatabase } from "../src/demo/database.ts";

const USAGE = "usage: bun run devnet [--port N] [--write FILE]";

function parseOptions(): { port?: number; write?: string } {
  let values: { port?: string; write?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: Bun.argv.slice(2),
      options: { port: { type: "string" }, write: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65535)) {
    console.error(`--port must be a port number below 65535, got ${values.port}\n${USAGE}`);
    process.exit(2);
  }
  return { port, write: values.write };
}

/**
 * arrow402 resolves relative paths against the config file's folder (ARCHITECTURE.md §2), so a path
 * given relative to the working directory is rewritten for the file; absolute when the file
 * lives outside the working directory's tree.
 */
function relativeTo(configFile: string, cwdRelative: string): string {
  const path = relative(dirname(resolve(configFile)), resolve(cwdRelative));
  return path.startsWith("..") ? resolve(cwdRelative) : `./${path}`;
}

const options = parseOptions();
// The sandbox config serves the demo's database: build it now if this checkout has none yet.
if (!existsSync(DEMO_DATABASE_PATH)) {
  console.log(`creating the demo database at ${DEMO_DATABASE_PATH} …`);
  createDemoDatabase(resolve(DEMO_DATABASE_PATH));
}
const devnet = await startDevnet({
  facilitatorPort: options.port,
  rpcPort: options.port === undefined ? undefined : options.port + 1,
  log: (line) => console.log(`[facilitator] ${line}`),
}).catch((error: unknown) => {
  console.error(`devnet failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

const configFor = (file?: string) =>
  devnetConfigYaml({
    facilitatorUrl: devnet.facilitatorUrl,
    rpcUrl: devnet.rpcUrl,
    token: devnet.tokenConfig(),
    payTo: devnet.payTo,
    ...(file === undefined
      ? {}
      : { databasePath: relativeTo(file, DEMO_DATABASE_PATH), ledgerPath: relativeTo(file, DEVNET_LEDGER_PATH) }),
  });

const payerTokens = Number(await devnet.balanceOf(devnet.payer.address)) / 10 ** devnet.token.decimals;
console.log(`arrow402 devnet is running (Ctrl-C to stop)

  chain RPC     ${devnet.rpcUrl}  (chain id ${devnet.chainId}, network ${devnet.network})
  facilitator   ${devnet.facilitatorUrl}  (signer ${devnet.facilitatorSigner} pays the gas)
  test token    ${devnet.token.name} v${devnet.token.version}, ${devnet.token.decimals} decimals, at ${devnet.token.address}
  payer         ${devnet.payer.address}  holds ${payerTokens} test USDC, no ETH needed
  payer key     ${devnet.payer.privateKey}
  pay_to        ${devnet.payTo}

---- arrow402 config (save as arrow402.yaml next to .arrow402/, then: bun src/main.ts serve --config arrow402.yaml) ----
${configFor()}
---- paying from a script (imports: @x402/fetch, @x402/evm/exact/client, viem/accounts) ----
const pay = wrapFetchWithPayment(fetch, registerExactEvmScheme(new x402Client(), { signer: privateKeyToAccount("${devnet.payer.privateKey}") }).setSpendControls(false));
// then: await pay("http://localhost:4021/api/query?query=" + encodeURIComponent("SELECT * FROM swaps LIMIT 10"))
`);

if (options.write !== undefined) {
  writeFileSync(options.write, configFor(options.write));
  console.log(`config written to ${options.write}`);
}

const shutdown = async () => {
  await devnet.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
