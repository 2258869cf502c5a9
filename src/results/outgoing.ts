/**
 * The bytes of one response waiting for its client (ARCHITECTURE.md §11 "Hostile clients"). Chunks wait
 * in memory while the client reads; the producer (a query worker) is held back once a few are
 * waiting, so memory stays bounded. A client that reads nothing for `stallMs` while the producer
 * waits is a stalled reader: from then on its bytes go to a spill file (spill.ts) and the producer
 * is released at once, so the worker finishes and serves other requests; the client reads the
 * file when it resumes. A client that reads nothing for `sendTimeoutMs` is cut.
 */
import type { UnsentBytes } from "./sent-body.ts";
import { KEPT_FOR_PAID_RESULTS, SpillFile, type SpillBudget } from "./spill.ts";

export interface SendingOptions {
  /** No read for this long while the producer waits: spill instead of holding the worker. */
  stallMs: number;
  /** No read for this long: the response is cut (`limits.send_timeout_ms`). */
  sendTimeoutMs: number;
  budget: SpillBudget;
  /** Bytes of complete answers not yet taken by their clients (sent-body.ts). */
  unsent: UnsentBytes;
}

interface Entry {
  bytes: Uint8Array[];
  /** Called once these bytes are no longer the producer's concern (sent, or spilled). */
  consumed?: () => void;
}

export class SendTimeoutError extends Error {
  constructor(ms: number) {
    super(`the client read nothing for ${ms} ms`);
  }
}

/** `take`'s answer while the next bytes are still on their way to the spill file. */
export const NOT_YET = Symbol("not yet");

export class OutgoingQueue {
  private readonly memory: Entry[] = [];
  private spill: SpillFile | null = null;
  private watching = false;
  private lastRead = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly options: SendingOptions | null,
    /** The client stopped reading for longer than the send timeout (or a spill write failed). */
    private readonly onTimeout: (error: Error) => void,
    /** Spilled bytes reached the file: a reader told NOT_YET may take them now. */
    private readonly onReadable: () => void = () => {},
  ) {}

  push(entry: Entry): void {
    // Spilled bytes come before anything in memory; once memory holds a chunk, later ones follow it.
    if (this.spill === null || this.memory.length > 0 || !this.spillEntry(entry)) this.memory.push(entry);
    this.arm();
  }

  /** Sends the entry to the spill file; its producer is released once it is written (the disk's pace, not this thread's). */
  private spillEntry(entry: Entry): boolean {
    return this.spill!.append(entry.bytes, () => {
      entry.consumed?.();
      this.onReadable();
    });
  }

  get isEmpty(): boolean {
    return this.memory.length === 0 && (this.spill === null || (this.spill.pending === 0 && this.spill.queuedBytes === 0));
  }

  /** Every chunk, for a result that ended before its response started (sent as one buffer). */
  drainAll(): Uint8Array[] {
    const chunks = this.memory.flatMap((entry) => entry.bytes);
    this.memory.length = 0;
    return chunks;
  }

  /** The next bytes for the client, in order; null when nothing is waiting, NOT_YET while they are being spilled. */
  take(): Uint8Array[] | null | typeof NOT_YET {
    this.lastRead = performance.now();
    const spilled = this.spill?.next() ?? null;
    if (spilled === null && this.spill !== null && this.spill.queuedBytes > 0) return NOT_YET;
    let bytes: Uint8Array[] | null = spilled === null ? null : [spilled];
    if (bytes === null) {
      const entry = this.memory.shift();
      if (entry === undefined) return null;
      entry.consumed?.();
      bytes = entry.bytes;
    }
    this.arm();
    return bytes;
  }

  /** The response has started: from now on a client that stops reading is noticed. */
  startWatching(): void {
    this.watching = true;
    this.lastRead = performance.now();
    this.arm();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.spill?.close();
    this.memory.length = 0;
  }

  /** Schedules the next check while bytes wait for a client that is being watched. */
  private arm(): void {
    if (this.options === null || !this.watching || this.closed || this.timer !== null || this.isEmpty) return;
    const { stallMs, sendTimeoutMs } = this.options;
    const deadline = this.spill === null ? Math.min(stallMs, sendTimeoutMs) : sendTimeoutMs;
    const wait = Math.max(1, this.lastRead + deadline - performance.now());
    this.timer = setTimeout(() => this.check(), wait);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private check(): void {
    this.timer = null;
    if (this.closed || this.isEmpty || this.options === null) return;
    const idle = performance.now() - this.lastRead;
    if (idle >= this.options.sendTimeoutMs) {
      this.onTimeout(new SendTimeoutError(this.options.sendTimeoutMs));
      return;
    }
    if (this.spill === null && idle >= this.options.stallMs && this.memory.some((entry) => entry.consumed !== undefined)) this.startSpilling();
    this.arm();
  }

  /** Moves the waiting chunks to a spill file, in order, releasing their producer. */
  private startSpilling(): void {
    try {
      const budget = this.options!.budget;
      this.spill = new SpillFile(budget, (error) => this.onTimeout(error), budget.limitBytes * KEPT_FOR_PAID_RESULTS);
    } catch {
      return; // no temporary file: the producer stays held back, as before
    }
    while (this.memory.length > 0 && this.spillEntry(this.memory[0]!)) this.memory.shift();
  }
}
