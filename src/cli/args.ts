/** Command-line parsing shared by the subcommands (ARCHITECTURE.md §1). Usage errors exit with 2. */
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {}

export const HELP = `arrow402 — publish SQLite tables as Apache Arrow over HTTP, paid per query with x402

Usage:
  arrow402 serve      [--config FILE] [--bind HOST:PORT]
                                                start the server (the built-in demo when there is no config);
                                                --bind overrides server.bind (port 0 picks a free port)
  arrow402 dashboards [--config FILE] [SLUG] [--force]
                                                write the dashboards landing page and scaffold missing dashboards
  arrow402 validate   [--config FILE]           check the config, the database and every stored value
  arrow402 payments   [--config FILE] [--since DATE]
                                                list settled payments and totals per table and token
  arrow402 payments   [--config FILE] --reconcile
                                                resolve unconfirmed settlements through the chain
                                                (rpc_urls): confirm, remove expired, or say why left
  arrow402 tables     URL [--rpc NET=URL]... [--token-decimals [NET:]ADDRESS=N]...
                                                list a server's tables, columns and prices
  arrow402 query      URL "SQL" [--format table|csv|json|ndjson|arrow|parquet] [--output FILE]
                      [--max-amount AMOUNT] [--yes] [--network NET]... [--key-env VAR]
                      [--rpc NET=URL]... [--token-decimals [NET:]ADDRESS=N]... [--max-bytes SIZE]
                                                run a query, paying within --max-amount (token units);
                                                arrow and parquet are the server's own bytes, the
                                                others are rendered from its Arrow stream; the
                                                transfer is zstd- or gzip-compressed when it helps.
                                                An answer larger than --max-bytes (default 1GiB; e.g.
                                                500MB, 4GiB), as sent or decompressed, is refused; it
                                                is streamed to --output FILE, which it replaces once
                                                complete. Control characters in what the server sends
                                                are printed as visible escapes (\\u{1b}).
                                                the key is read from $ARROW402_PRIVATE_KEY (or --key-env).
                                                A token's decimals come from the built-in USDC list, from
                                                its contract via --rpc (or $ARROW402_RPC), or from
                                                --token-decimals; never from the server. Other tokens
                                                are not paid under --max-amount.
  arrow402 version                              print the version
  arrow402 --help                               this help

Without --config, ./arrow402.yaml is used when it exists, else the demo.
Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid configuration;
query also: 3 query refused (400), 4 not paid (over budget, unverified token or not confirmed), 5 payment refused,
6 server error.`;

export function parse<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T, positionals = 0) {
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals: positionals > 0, strict: true });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}
