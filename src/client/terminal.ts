/**
 * The client's terminal side: the yes/no question (read from stdin, which must be a terminal),
 * download progress on stderr (only when stderr is a terminal, so logs stay clean), and writing
 * the output to a file or stdout without holding it all twice.
 */
import { createInterface } from "node:readline/promises";
import { printable } from "./printable.ts";

/** The question names what the server quoted (a recipient, a token's symbol read from its contract): printed as printable text. */
export async function askYesNo(question: string): Promise<boolean> {
  const reader = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await reader.question(printable(question));
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    reader.close();
  }
}

/** Shows bytes received on one rewritten stderr line, from 1 MB on, at most 4 times a second. */
export function downloadProgress(enabled: boolean): { update(bytes: number): void; done(): void } {
  let shown = false;
  let last = 0;
  return {
    update(bytes) {
      if (!enabled || bytes < 1_000_000) return;
      const now = Date.now();
      if (now - last < 250) return;
      last = now;
      shown = true;
      process.stderr.write(`\rReceiving… ${(bytes / 1_000_000).toFixed(1)} MB`);
    },
    done() {
      if (shown) process.stderr.write("\r\x1b[K");
    },
  };
}

const FLUSH_EVERY = 1 << 20;

/** Writes every chunk to `path` (created or replaced) or to stdout. */
export async function writeChunks(chunks: Iterable<string | Uint8Array>, path: string | null): Promise<void> {
  const sink = path === null ? Bun.stdout.writer() : Bun.file(path).writer();
  let pending = 0;
  for (const chunk of chunks) {
    pending += await sink.write(chunk);
    if (pending >= FLUSH_EVERY) {
      await sink.flush();
      pending = 0;
    }
  }
  if (path === null) await sink.flush();
  else await sink.end();
}
