/**
 * Where a response's bytes wait when its client stops reading (ARCHITECTURE.md §11 "Hostile clients":
 * a stalled reader must not hold a query worker). The worker finishes into a temporary file and
 * moves on; the response reads the file back as the client resumes. The file is unlinked as soon
 * as it is created, so nothing is left behind whatever happens to the process, and every spilled
 * byte counts against one budget shared by all responses (past it, slow readers hold their worker
 * again, as back-pressure).
 */
import { close, openSync, readSync, unlinkSync, write } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Off this thread: a write into a page cache full of dirty pages can block for seconds (a stalled
 * reader of a wide export spilled ~500 MB/s, and the HTTP thread spent 7 of 13 s in writeSync).
 */
const writeOffThread = promisify(write);

/** Bytes read back per pull: large enough to keep a fast client busy, small enough to stay cheap. */
const READ_BYTES = 1 << 20;

/**
 * The share of the budget a stalled reader's file leaves free: anyone can stall a free export, so
 * stalled readers alone cannot take the room paid results need while their payments settle
 * (held-result.ts), and a buyer is not refused (503) because others stopped reading.
 */
export const KEPT_FOR_PAID_RESULTS = 0.25;

export class SpillBudget {
  private used = 0;
  /** Bytes ever reserved: every byte written to a spill file (and read back unless its response ended first). */
  private reservedTotal = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes `bytes` of the budget if that leaves at least `keepFree` of it. */
  reserve(bytes: number, keepFree = 0): boolean {
    if (this.used + bytes + keepFree > this.limitBytes) return false;
    this.used += bytes;
    this.reservedTotal += bytes;
    return true;
  }

  free(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get usedBytes(): number {
    return this.used;
  }

  get spilledBytes(): number {
    return this.reservedTotal;
  }
}

export class SpillFile {
  private readonly fd: number;
  /** Bytes on file, readable. */
  private written = 0;
  /** Bytes reserved and on their way to the file. */
  private queued = 0;
  private read = 0;
  private closed = false;
  private writing: Promise<void> = Promise.resolve();

  /**
   * `onFailure`: a write failed (the disk is full): the response cannot be completed. `keepFree`:
   * bytes of the budget this file leaves to others.
   */
  constructor(
    private readonly budget: SpillBudget,
    private readonly onFailure: (error: Error) => void = () => {},
    private readonly keepFree = 0,
  ) {
    const path = join(tmpdir(), `arrow402-spill-${process.pid}-${crypto.randomUUID()}`);
    this.fd = openSync(path, "wx+", 0o600);
    unlinkSync(path);
  }

  /**
   * Appends the chunks, written in order off this thread; `onWritten` is called once they are on
   * file (and readable). False (nothing queued) when the budget has no room for them.
   */
  append(chunks: Uint8Array[], onWritten: () => void = () => {}): boolean {
    const bytes = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    if (this.closed || !this.budget.reserve(bytes, this.keepFree)) return false;
    this.queued += bytes;
    this.writing = this.writing.then(async () => {
      for (const chunk of chunks) {
        let offset = 0;
        while (offset < chunk.byteLength) {
          if (this.closed) return;
          offset += (await writeOffThread(this.fd, chunk, offset, chunk.byteLength - offset, this.written + offset)).bytesWritten;
        }
        if (this.closed) return;
        this.written += chunk.byteLength;
        this.queued -= chunk.byteLength;
      }
      onWritten();
    }).catch((error: Error) => {
      if (!this.closed) this.onFailure(error);
    });
    return true;
  }

  /** Resolves once every write queued so far has returned (a failed one has called `onFailure`). */
  flushed(): Promise<void> {
    return this.writing;
  }

  /** Bytes on file not yet read. */
  get pending(): number {
    return this.written - this.read;
  }

  /** Bytes still on their way to the file: they come before anything appended later. */
  get queuedBytes(): number {
    return this.queued;
  }

  /** The next bytes in order that are on file, or null when there are none (yet). */
  next(): Uint8Array | null {
    if (this.closed || this.pending === 0) return null;
    const buffer = new Uint8Array(Math.min(READ_BYTES, this.pending));
    let filled = 0;
    while (filled < buffer.byteLength) filled += readSync(this.fd, buffer, filled, buffer.byteLength - filled, this.read + filled);
    this.read += filled;
    this.budget.free(filled);
    return buffer;
  }

  /**
   * Frees the budget at once; the file is closed once a write in progress has returned, off this
   * thread too: closing the last descriptor of a 3.5 GB unlinked file frees its blocks (~400 ms).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.free(this.pending + this.queued);
    // Nothing more will reach the file: a reader is not told to wait for it.
    this.queued = 0;
    void this.writing.finally(() => close(this.fd, () => {}));
  }
}
