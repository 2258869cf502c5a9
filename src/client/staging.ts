/**
 * Where an answer goes while it arrives (DESIGN §17): a file, never memory, so that neither a
 * large honest answer nor a decompression bomb grows the client (http.ts bounds the file's size).
 *
 * With `--output FILE` the body is written beside FILE and, once checked and rendered, renamed
 * over it: a failure (or a refusal for size) leaves an existing FILE as it was. An output that is
 * not a regular file (`/dev/stdout`, a named pipe) is written in place at the end, the body being
 * kept in the temporary directory meanwhile. Without `--output` the body is kept in the temporary
 * directory ($TMPDIR) and the output written to stdout. Scratch files are removed at the end, and
 * on SIGINT, SIGTERM or SIGHUP.
 */
import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync, type Stats } from "node:fs";
import { rename } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { writeChunks } from "./terminal.ts";

export interface Staging {
  /** The answer's body is written here as it arrives (http.ts `toFile`). */
  body: string;
  /** Whether the output is a regular file: CSV values are then written exact (format/csv.ts). */
  regularFile: boolean;
  /** Writes the output: `chunks`, or with `bodyAsIs` the body file itself (renamed when it can be). */
  deliver(chunks: Iterable<string | Uint8Array>, bodyAsIs: boolean): Promise<void>;
  /** Removes the scratch files left; idempotent. */
  cleanup(): void;
}

export type Staged = { ok: true; staging: Staging } | { ok: false; reason: string };

const SIGNALS = [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const;

/** Scratch files for an answer to `output` (null: stdout), created now so that a place that cannot be written fails before any payment. */
export function stage(output: string | null): Staged {
  const existing = output === null ? null : statOrNull(output);
  if (existing?.isDirectory()) return { ok: false, reason: `--output ${output} is a directory: give a file name` };
  const beside = output !== null && (existing === null || existing.isFile());
  // A symbolic link to a file stays one: the file it names is replaced.
  const target = output !== null && existing !== null && beside ? realpathSync(output) : output;
  const scratch: string[] = [];
  let body: string;
  try {
    if (beside && target !== null) {
      body = join(dirname(target), `.${basename(target)}.${process.pid}.arrow402-part`);
      writeFileSync(body, "");
      scratch.push(body);
    } else {
      const dir = mkdtempSync(join(tmpdir(), "arrow402-"));
      scratch.push(dir);
      body = join(dir, "answer");
    }
  } catch (error) {
    const where = beside ? `--output ${output}` : `the answer in the temporary directory ${tmpdir()} (set TMPDIR to a writable directory)`;
    const missing = beside && (error as NodeJS.ErrnoException).code === "ENOENT";
    const why = missing ? `there is no directory ${dirname(output)}` : (error as Error).message;
    return { ok: false, reason: `cannot write ${where}: ${why}; nothing was paid` };
  }

  const onSignal = SIGNALS.map(([signal, code]) => [signal, () => (cleanup(), process.exit(code))] as const);
  function cleanup() {
    for (const [signal, handler] of onSignal) process.off(signal, handler);
    for (const path of scratch.splice(0)) rmSync(path, { recursive: true, force: true });
  }
  for (const [signal, handler] of onSignal) process.once(signal, handler);

  return {
    ok: true,
    staging: {
      body,
      regularFile: beside,
      cleanup,
      async deliver(chunks, bodyAsIs) {
        if (target === null || !beside) return writeChunks(chunks, target);
        if (bodyAsIs) return rename(body, target);
        const rendered = `${body}.rendered`;
        scratch.push(rendered);
        await writeChunks(chunks, rendered);
        await rename(rendered, target);
      },
    },
  };
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
