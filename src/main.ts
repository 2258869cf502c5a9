#!/usr/bin/env bun
/**
 * arrow402 command line (ARCHITECTURE.md §1): the only file that reads process.argv.
 * Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid config.
 */
import { HELP, parse, UsageError } from "./cli/args.ts";
import { printable } from "./client/printable.ts";
import { ConfigError, ValueDoesNotFitError } from "./errors.ts";
import { VERSION } from "./version.ts";

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = { config: { type: "string" as const, short: "c" } };
  switch (command) {
    case undefined:
    case "--help":
    case "-h":
    case "help":
      console.log(HELP);
      return 0;
    case "version":
    case "--version":
    case "-v":
      console.log(VERSION);
      return 0;
    case "serve": {
      const { values } = parse(rest, { ...config, bind: { type: "string" } });
      await (await import("./cli/serve.ts")).serve(values.config, values.bind);
      return -1; // keeps running
    }
    case "validate": {
      const { values } = parse(rest, config);
      return (await import("./cli/validate.ts")).validate(values.config);
    }
    case "dashboards": {
      const { values, positionals } = parse(rest, { ...config, force: { type: "boolean" } }, 1);
      return (await import("./cli/dashboards.ts")).dashboards(values.config, positionals[0], values.force ?? false);
    }
    case "payments": {
      const { values } = parse(rest, { ...config, since: { type: "string" }, reconcile: { type: "boolean" } });
      return (await import("./cli/payments.ts")).payments(values.config, { since: values.since, reconcile: values.reconcile });
    }
    case "tables":
      return (await import("./cli/tables.ts")).tablesCommand(rest);
    case "query":
      return (await import("./cli/query.ts")).queryCommand(rest);
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

try {
  const code = await run(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`arrow402: ${error.message}\nRun 'arrow402 --help' for usage.`);
    process.exit(2);
  }
  if (error instanceof ConfigError) {
    console.error(`arrow402: invalid configuration (${error.problems.length} problem${error.problems.length === 1 ? "" : "s"}):`);
    for (const problem of error.problems) console.error(`  ${problem}`);
    process.exit(2);
  }
  // The operator's own commands (dashboards…) may name a stored value; a client never sees it.
  const message = error instanceof ValueDoesNotFitError ? error.operatorMessage : error instanceof Error ? error.message : String(error);
  // The buyer's commands print what a server sent only as printable text (DESIGN §17), unforeseen errors included.
  const buyer = process.argv[2] === "query" || process.argv[2] === "tables";
  console.error(`arrow402: ${buyer ? printable(message) : message}`);
  process.exit(1);
}
