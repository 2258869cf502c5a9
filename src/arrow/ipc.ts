/**
 * Arrow IPC stream messages (format: https://arrow.apache.org/docs/format/Columnar.html#ipc-streaming-format):
 * each message is 0xFFFFFFFF, an int32 metadata length, a flatbuffer `Message` padded to 8 bytes,
 * then the body. The schema message is apache-arrow's own encoding. The record-batch metadata is
 * written here by hand: it is a fixed shape (lengths, field nodes, buffer regions), and building
 * the batch body ourselves lets the whole message go into one buffer, written once and transferred
 * to the HTTP thread without a copy.
 */
import { Message, type Schema } from "apache-arrow";
import { BatchBuffer, type ColumnPlan } from "./columns.ts";

const CONTINUATION = -1;
const METADATA_VERSION_V5 = 4;
const HEADER_RECORD_BATCH = 3;

/** The end-of-stream marker: a continuation followed by a zero length. */
export function endOfStream(): Uint8Array {
  return new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
}

export function schemaMessage(schema: Schema): Uint8Array {
  const metadata = Message.encode(Message.from(schema));
  const paddedLength = pad8(metadata.byteLength);
  const out = new Uint8Array(8 + paddedLength);
  const view = new DataView(out.buffer);
  view.setInt32(0, CONTINUATION, true);
  view.setInt32(4, paddedLength, true);
  out.set(metadata, 8);
  return out;
}

/**
 * One record batch: metadata and body in a single buffer of its own (transferable), allocated once;
 * the columns write their buffers in place. `frame` puts other messages around it in the same
 * buffer (a whole small stream: schema, batch, end), each a multiple of 8 bytes long.
 */
export function recordBatchMessage(length: number, columns: ColumnPlan[], frame?: { before: Uint8Array; after: Uint8Array }): Uint8Array {
  // One field node per column, and per nested child after its parent (List values, Struct members), depth first.
  const nodes = columns.some((column) => column.children !== undefined) ? fieldNodes(columns, length) : null;
  const plans = nodes?.plans ?? columns;
  const lengths: number[] = [];
  for (const column of plans) lengths.push(...column.lengths);
  const metadataLength = recordBatchMetadataLength(plans.length, lengths.length);
  const start = frame?.before.byteLength ?? 0;
  const bodyStart = start + 8 + metadataLength;
  let bodyLength = 0;
  const positions = new Array<number>(lengths.length);
  for (let i = 0; i < lengths.length; i++) {
    positions[i] = bodyStart + bodyLength;
    bodyLength += pad8(lengths[i]!);
  }
  const messageEnd = bodyStart + bodyLength;
  const out = new BatchBuffer(messageEnd + (frame?.after.byteLength ?? 0));
  let buffer = 0;
  const nullCounts = new Array<number>(plans.length);
  for (let i = 0; i < plans.length; i++) {
    nullCounts[i] = plans[i]!.write(out, positions, buffer);
    buffer += plans[i]!.lengths.length;
  }
  out.view.setInt32(start, CONTINUATION, true);
  out.view.setInt32(start + 4, metadataLength, true);
  writeRecordBatchMetadata(out, start + 8, length, nodes?.lengths ?? null, nullCounts, lengths, bodyLength);
  if (frame) {
    out.bytes.set(frame.before, 0);
    out.bytes.set(frame.after, messageEnd);
  }
  return out.bytes;
}

/** The plans of every field node in IPC order (each column, then its children), and their lengths. */
function fieldNodes(columns: ColumnPlan[], length: number): { plans: ColumnPlan[]; lengths: number[] } {
  const plans: ColumnPlan[] = [];
  const lengths: number[] = [];
  const visit = (plan: ColumnPlan, nodeLength: number) => {
    plans.push(plan);
    lengths.push(nodeLength);
    for (const child of plan.children ?? []) visit(child.plan, child.length);
  };
  for (const column of columns) visit(column, length);
  return { plans, lengths };
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

/*
 * Flatbuffer layout (offsets from the metadata start; every table and struct vector 8-aligned):
 *   0  uoffset → Message table (16)
 *   4  Message vtable: size 12, table size 20, version@16, header_type@18, header@4, bodyLength@8
 *  16  Message table: soffset 12, header uoffset (→ 48), bodyLength int64, version int16, header_type uint8
 *  36  RecordBatch vtable: size 10, table size 24, length@8, nodes@4, buffers@16
 *  48  RecordBatch table: soffset 12, nodes uoffset, length int64, buffers uoffset, padding
 *  72  padding, nodes vector (uint32 count, then FieldNode {length, null_count} structs at 80)
 *      padding, buffers vector (uint32 count, then Buffer {offset, length} structs)
 */
function recordBatchMetadataLength(nodeCount: number, bufferCount: number): number {
  return 80 + 16 * nodeCount + 8 + 16 * bufferCount;
}

/** The constant part of the metadata (offsets, vtables, version, header type): copied, then patched. */
const METADATA_HEAD = (() => {
  const head = new DataView(new ArrayBuffer(80));
  head.setInt32(0, 16, true);
  // Message vtable and table.
  [12, 20, 16, 18, 4, 8].forEach((value, i) => head.setUint16(4 + 2 * i, value, true));
  head.setInt32(16, 12, true);
  head.setInt32(20, 48 - 20, true);
  head.setInt16(32, METADATA_VERSION_V5, true);
  head.setUint8(34, HEADER_RECORD_BATCH);
  // RecordBatch vtable and table.
  [10, 24, 8, 4, 16].forEach((value, i) => head.setUint16(36 + 2 * i, value, true));
  head.setInt32(48, 12, true);
  head.setInt32(52, 76 - 52, true);
  return new Uint8Array(head.buffer);
})();

/** Writes the metadata at byte `base` of `out` (8-aligned), through its int32 words. */
function writeRecordBatchMetadata(
  out: BatchBuffer,
  base: number,
  length: number,
  /** Each field node's length; null when every node is a top-level column of `length` rows. */
  nodeLengths: number[] | null,
  nullCounts: number[],
  bufferLengths: number[],
  bodyLength: number,
): void {
  const words = out.words;
  const word = base >> 2;
  // Little-endian int64 of a safe integer: low word (ToInt32 keeps the low 32 bits), then high.
  const i64 = (at: number, value: number) => {
    words[word + (at >> 2)] = value % 4_294_967_296 | 0;
    words[word + (at >> 2) + 1] = Math.floor(value / 4_294_967_296);
  };
  out.bytes.set(METADATA_HEAD, base);
  i64(24, bodyLength);
  i64(56, length);
  // Field nodes.
  words[word + 19] = nullCounts.length; // at 76
  let at = 80;
  for (let node = 0; node < nullCounts.length; node++) {
    i64(at, nodeLengths === null ? length : nodeLengths[node]!);
    i64(at + 8, nullCounts[node]!);
    at += 16;
  }
  // Buffers: the vector's count sits 4 bytes before its 8-aligned structs.
  words[word + 16] = at + 4 - 64; // uoffset at 64
  words[word + ((at + 4) >> 2)] = bufferLengths.length;
  at += 8;
  let offset = 0;
  for (const bufferLength of bufferLengths) {
    i64(at, offset);
    i64(at + 8, bufferLength);
    offset += pad8(bufferLength);
    at += 16;
  }
}
