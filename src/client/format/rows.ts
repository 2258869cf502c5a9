/** An Arrow IPC stream as named columns and rows of raw values, batch by batch. */
import { tableFromIPC, type Table } from "apache-arrow";
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
  /** Rows of raw values in column order, read lazily from the batches. */
  rows(): Iterable<unknown[]>;
}

export function decodeArrow(bytes: Uint8Array): DecodedResult {
  const table: Table = tableFromIPC(bytes);
  const columns = table.schema.fields.map((field) => ({ name: field.name, kind: cellKind(field.type), type: String(field.type) }));
  return {
    columns,
    rowCount: table.numRows,
    *rows() {
      for (const batch of table.batches) {
        const vectors = columns.map((_, index) => batch.getChildAt(index));
        for (let row = 0; row < batch.numRows; row++) yield vectors.map((vector) => vector?.get(row) ?? null);
      }
    },
  };
}
