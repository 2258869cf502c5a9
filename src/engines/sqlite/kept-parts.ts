/**
 * The bookkeeping of a split scan's parts (striped.ts, worker.ts `runRange`): the parts of wide
 * ranges kept until their range is next in order, and the parts each worker has sent that no one
 * has consumed yet, which hold it back at MAX_IN_FLIGHT as a one-worker query's chunks do.
 */
import type { WorkerSlot } from "./pool.ts";
import { MAX_IN_FLIGHT } from "./protocol.ts";

/** A `range-part` message; `acked` once it no longer counts against its worker's MAX_IN_FLIGHT. */
export interface Part {
  slot: WorkerSlot;
  bytes: Uint8Array[];
  rows: number;
  acked: boolean;
}

export class KeptParts {
  private readonly byRange = new Map<number, Part[]>();
  private readonly inFlight = new Map<WorkerSlot, number>();

  /** A part arrived: it counts against its worker until `settle`. */
  arrived(part: Part): void {
    this.inFlight.set(part.slot, (this.inFlight.get(part.slot) ?? 0) + 1);
  }

  /** Keeps a part of range `seq` for later; returns the parts kept in all. */
  keep(seq: number, part: Part): number {
    const kept = this.byRange.get(seq);
    if (kept === undefined) this.byRange.set(seq, [part]);
    else kept.push(part);
    let count = 0;
    for (const parts of this.byRange.values()) count += parts.length;
    return count;
  }

  /** The kept parts of range `seq`, in order, no longer kept. */
  take(seq: number): Part[] {
    const kept = this.byRange.get(seq) ?? [];
    this.byRange.delete(seq);
    return kept;
  }

  /** Whether the worker has MAX_IN_FLIGHT parts not consumed: it waits for one. */
  heldBack(slot: WorkerSlot): boolean {
    return (this.inFlight.get(slot) ?? 0) >= MAX_IN_FLIGHT;
  }

  /** The part stops counting against its worker: true if the worker is to be told (an `ack`). */
  settle(part: Part): boolean {
    if (part.acked) return false;
    part.acked = true;
    const count = this.inFlight.get(part.slot);
    if (count === undefined) return false;
    this.inFlight.set(part.slot, count - 1);
    return true;
  }

  /** The worker left the scan: its parts in flight no longer count. */
  forget(slot: WorkerSlot): void {
    this.inFlight.delete(slot);
  }
}
