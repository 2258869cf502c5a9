/**
 * The server's Parquet file, checked before it is written: both "PAR1" magics and a footer that
 * parses (hyparquet, the reader behind the server's writer library), whose row groups add up to
 * the file's row count. The bytes themselves are written as they came.
 */
import { parquetMetadata } from "hyparquet";

const MAGIC = 0x31524150; // "PAR1", little-endian

/** The file's row count; throws, saying what is wrong, when the bytes are not a Parquet file. */
export function parquetRowCount(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || view.getUint32(0, true) !== MAGIC) throw new Error("it does not start with the Parquet magic 'PAR1'");
  const metadata = parquetMetadata(bytes);
  const rows = BigInt(metadata.num_rows);
  const inGroups = metadata.row_groups.reduce((sum, group) => sum + BigInt(group.num_rows), 0n);
  if (inGroups !== rows) throw new Error(`its footer counts ${rows} rows but its row groups hold ${inGroups}`);
  return Number(rows);
}
