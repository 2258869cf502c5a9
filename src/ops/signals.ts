/**
 * Signals of `arrow402 serve` (ARCHITECTURE.md §11 "Operations"): SIGTERM and SIGINT drain and exit 0
 * (a second one exits at once, 1); SIGHUP reloads the config file.
 */
import type { RunningServer } from "../server.ts";
import { flushLogs } from "./logs.ts";

export interface SignalOptions {
  /** Reloads the config (SIGHUP); null when there is no file to reload (the built-in demo). */
  reload: (() => void) | null;
  exit?: (code: number) => void;
}

export function handleSignals(server: RunningServer, options: SignalOptions): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      process.stderr.write(`arrow402: ${signal} again: exiting without waiting for requests in flight\n`);
      exit(1);
      return;
    }
    stopping = true;
    let code = 0;
    try {
      await server.shutdown(signal);
    } catch (error) {
      process.stderr.write(`arrow402: shutdown failed: ${(error as Error).message}\n`);
      code = 1;
    }
    await flushed();
    exit(code);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGHUP", () => {
    if (options.reload !== null) options.reload();
    else server.events.emit({ type: "config.rejected", source: "built-in demo", problems: ["the built-in demo has no config file to reload; start with --config FILE"] });
  });
}

/** Resolves once what was written to stdout and stderr has been handed to the OS. */
function flushed(): Promise<void> {
  flushLogs();
  const drained = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write("", () => resolve()));
  return Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => {});
}
