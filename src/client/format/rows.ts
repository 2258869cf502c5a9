/**
 * An Arrow IPC stream in a file as named columns and rows of raw values, read a chunk and a batch
 * at a time (DESIGN §17: an answer is streamed to disk, never held whole).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { RecordBatchReader, type RecordBatch, type Schema } from "apache-arrow";
import { cellKind, type CellKind } from "./cells.ts";

export interface ColumnInfo {
  name: string;
  kind: CellKind;
  /** apache-arrow's type name, e.g. "Int64". */
  type: string;
}

export interface DecodedResult {
  columns: ColumnInfo[];
  rowCount: number;
  /** Rows of raw values in column order, read lazily from the batches; each call reads them from the first. */
  rows(): Iterable<unknown[]>;
}

/**
 * The Arrow stream in a file. It is read through once when opened, so a stream that does not
 * decode, or is cut short, is an error before anything is written, and its rows are counted;
 * `rows()` then reads it again, a batch at a time.
 */
export function decodeArrow(path: string): DecodedResult {
  let rowCount = 0;
  for (const batch of fileBatches(path)) rowCount += batch.numRows;
  // An empty body reads as a stream without a schema: no columns, no rows.
  const schema = RecordBatchReader.from(fileChunks(path)).open().schema as Schema | undefined;
  const columns = (schema?.fields ?? []).map((field) => ({ name: field.name, kind: cellKind(field.type), type: String(field.type) }));
  return {
    columns,
    rowCount,
    *rows() {
      for (const batch of fileBatches(path)) {
        const vectors = columns.map((_, index) => batch.getChildAt(index));
        for (let row = 0; row < batch.numRows; row++) yield vectors.map((vector) => vector?.get(row) ?? null);
      }
    },
  };
}

function* fileBatches(path: string): Generator<RecordBatch> {
  yield* RecordBatchReader.from(fileChunks(path));
}

const CHUNK_BYTES = 1 << 20;

/** The file's bytes, a chunk at a time, synchronously: apache-arrow's synchronous reader takes an iterable of chunks. */
export function* fileChunks(path: string): Generator<Uint8Array> {
  const fd = openSync(path, "r");
  try {
    for (;;) {
      const chunk = new Uint8Array(CHUNK_BYTES);
      const read = readSync(fd, chunk);
      if (read === 0) return;
      yield read === CHUNK_BYTES ? chunk : chunk.subarray(0, read);
    }
  } finally {
    closeSync(fd);
  }
}
