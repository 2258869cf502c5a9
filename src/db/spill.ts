/**
 * Where a response's bytes wait when its client stops reading (ARCHITECTURE.md §11 "Hostile clients":
 * a stalled reader must not hold a query worker). The worker finishes into a temporary file and
 * moves on; the response reads the file back as the client resumes. The file is unlinked as soon
 * as it is created, so nothing is left behind whatever happens to the process, and every spilled
 * byte counts against one budget shared by all responses (past it, slow readers hold their worker
 * again, as back-pressure).
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Bytes read back per pull: large enough to keep a fast client busy, small enough to stay cheap. */
const READ_BYTES = 1 << 20;

export class SpillBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  reserve(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  free(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get usedBytes(): number {
    return this.used;
  }
}

export class SpillFile {
  private readonly fd: number;
  private written = 0;
  private read = 0;
  private closed = false;

  constructor(private readonly budget: SpillBudget) {
    const path = join(tmpdir(), `arrow402-spill-${process.pid}-${crypto.randomUUID()}`);
    this.fd = openSync(path, "wx+", 0o600);
    unlinkSync(path);
  }

  /** Appends the chunks; false (nothing written) when the budget has no room for them. */
  append(chunks: Uint8Array[]): boolean {
    const bytes = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    if (this.closed || !this.budget.reserve(bytes)) return false;
    for (const chunk of chunks) {
      let offset = 0;
      while (offset < chunk.byteLength) offset += writeSync(this.fd, chunk, offset, chunk.byteLength - offset, this.written + offset);
      this.written += chunk.byteLength;
    }
    return true;
  }

  get pending(): number {
    return this.written - this.read;
  }

  /** The next bytes in order, or null when everything written has been read. */
  next(): Uint8Array | null {
    if (this.closed || this.pending === 0) return null;
    const buffer = new Uint8Array(Math.min(READ_BYTES, this.pending));
    let filled = 0;
    while (filled < buffer.byteLength) filled += readSync(this.fd, buffer, filled, buffer.byteLength - filled, this.read + filled);
    this.read += filled;
    this.budget.free(filled);
    return buffer;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.free(this.pending);
    closeSync(this.fd);
  }
}
