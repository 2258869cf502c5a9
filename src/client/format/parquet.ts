/**
 * The server's Parquet file, checked before it is written: both "PAR1" magics and a footer that
 * parses (hyparquet, the reader behind the server's writer library), whose row groups add up to
 * the file's row count, read from its first bytes and its footer without reading it whole. The
 * bytes themselves are written as they came.
 */
import { parquetMetadataAsync, type FileMetaData } from "hyparquet";

const MAGIC = 0x31524150; // "PAR1", little-endian

/** The file's row count; throws, saying what is wrong, when it is not a Parquet file. */
export async function parquetRowCount(path: string): Promise<number> {
  const file = Bun.file(path);
  checkMagic(await file.slice(0, 4).bytes(), file.size);
  const metadata = await parquetMetadataAsync({ byteLength: file.size, slice: (start, end) => file.slice(start, end).arrayBuffer() });
  return rowCount(metadata);
}

/** `head` holds the file's first bytes; a file has a magic at each end and the footer's length between, 12 bytes at least. */
function checkMagic(head: Uint8Array, size: number): void {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (size < 12 || head.byteLength < 4 || view.getUint32(0, true) !== MAGIC) throw new Error("it does not start with the Parquet magic 'PAR1'");
}

function rowCount(metadata: FileMetaData): number {
  const rows = BigInt(metadata.num_rows);
  const inGroups = metadata.row_groups.reduce((sum, group) => sum + BigInt(group.num_rows), 0n);
  if (inGroups !== rows) throw new Error(`its footer counts ${rows} rows but its row groups hold ${inGroups}`);
  return Number(rows);
}
