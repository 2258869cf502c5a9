/**
 * The Arrow IPC stream (ARCHITECTURE.md §5), the default format, through the shared FormatEncoder shape:
 * the schema message, one record batch per batch, the end-of-stream marker.
 */
import { createStreamEncoder, type EncoderColumn } from "../arrow/encode.ts";
import type { FormatEncoder, FormatOptions } from "./encoder.ts";

export function createArrowEncoder(columns: EncoderColumn[], options: FormatOptions = {}): FormatEncoder {
  const encoder = createStreamEncoder(columns, options);
  return {
    head: () => encoder.schemaMessage(),
    batch: (rows, firstRowIndex) => encoder.batchMessage(rows, firstRowIndex),
    end: () => encoder.endMessage(),
  };
}
