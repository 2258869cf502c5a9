/**
 * A paid result held for its buyer (ARCHITECTURE.md §6 step 8, §11 "Hostile clients"). It is read
 * whole before anything is settled (a failure half-way is never charged), then waits for the
 * facilitator's settlement, then for its client to read it. Only its first HELD_IN_MEMORY_BYTES
 * stay in memory: the rest goes to a spill file (spill.ts) under the budget streamed results
 * share (`limits.spill_budget_mb`), so a large paid result, or many bought at once, take disk
 * rather than memory. A result the budget has no room for cannot be held: `add` says so, and the
 * purchase is refused before anything is settled. Sent as a stream that is cut, like any
 * streamed result, when its client reads nothing for the send timeout.
 */
import { ResultNotHeldError } from "../errors.ts";
import type { SendingOptions } from "./outgoing.ts";
import { timedBody } from "./sent-body.ts";
import { SpillFile } from "./spill.ts";

/** Bytes of one held result kept in memory: as much as a streamed result's first response (protocol.ts). */
export const HELD_IN_MEMORY_BYTES = 8 * 1024 * 1024;

export class HeldResult {
  /** Read first: the bytes kept in memory before any went to the file. */
  private readonly head: Uint8Array[] = [];
  private spill: SpillFile | null = null;
  private inMemory = 0;
  /** A chunk was refused: so is every later one (the result has a gap and cannot be delivered). */
  private refused = false;
  private failure: Error | null = null;
  private released = false;

  /** `memoryBytes`: bytes kept in memory before the rest goes to the file. */
  constructor(
    private readonly sending: SendingOptions,
    private readonly memoryBytes = HELD_IN_MEMORY_BYTES,
  ) {}

  /**
   * Keeps the chunk, in memory or on file; false when it cannot (the spill budget is full, or no
   * temporary file can be made): the result cannot be held, and the caller releases it.
   */
  add(chunk: Uint8Array): boolean {
    if (this.refused) return false;
    // Once the file has begun, every later chunk goes there, however small, to keep the order.
    if (this.spill === null && this.inMemory + chunk.byteLength <= this.memoryBytes) {
      this.head.push(chunk);
      this.inMemory += chunk.byteLength;
      return true;
    }
    this.refused = !this.appendToFile(chunk);
    return !this.refused;
  }

  /** Whether any byte went to the file (the result is then sent as a stream). */
  get spilled(): boolean {
    return this.spill !== null && this.spill.pending + this.spill.queuedBytes > 0;
  }

  /** Every chunk, when none went to the file. */
  get chunks(): Uint8Array[] {
    return [...this.head];
  }

  /** Resolves once every byte can be read back; throws if the spill file could not be written. */
  async ready(): Promise<void> {
    await this.spill?.flushed();
    if (this.failure !== null) {
      this.release();
      throw new ResultNotHeldError(`The result could not be held for delivery (${this.failure.message}); nothing was charged: retry in 30 seconds.`);
    }
  }

  /** Frees the memory and the spill file (the buyer was refused, left, or has read it all). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.spill?.close();
    this.head.length = 0;
  }

  /**
   * The bytes in order, as a stream that is cut once its client has read nothing for the send
   * timeout (sent-body.ts): made when the answer is sent, so the settlement's time does not count.
   */
  body(rows: number): ReadableStream<Uint8Array> {
    const next = () => (this.released ? undefined : (this.head.shift() ?? this.spill?.next() ?? undefined));
    return timedBody(next, this.sending.sendTimeoutMs, rows, () => this.release());
  }

  private appendToFile(chunk: Uint8Array): boolean {
    if (this.spill === null) {
      try {
        this.spill = new SpillFile(this.sending.budget, (error) => (this.failure ??= error));
      } catch {
        return false; // no temporary file
      }
    }
    return this.spill.append([chunk]);
  }
}
