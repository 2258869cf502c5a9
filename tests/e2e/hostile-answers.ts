/**
 * Answers a hostile server gives a buyer (lying-server.ts `answer`): bodies that would take over
 * memory, and a large honest answer to compare with.
 */
import { Table, tableFromArrays, tableToIPC } from "apache-arrow";

export const ARROW = "application/vnd.apache.arrow.stream";

export const MiB = 1024 ** 2;

/**
 * `pieces` × 64 MiB of zeros compressed as `coding`: one compressed frame (zstd) or member (gzip)
 * repeated, which both codings define as the concatenation. 17 pieces (1088 MiB) is 35 KB of zstd
 * or 1.1 MB of gzip.
 */
export function bomb(coding: "zstd" | "gzip", pieces: number): Uint8Array {
  const zeros = new Uint8Array(64 * MiB);
  const piece = coding === "zstd" ? Bun.zstdCompressSync(zeros) : Bun.gzipSync(zeros, { level: 9 });
  return Buffer.concat(Array.from({ length: pieces }, () => piece));
}

/** The bomb as an Arrow answer (Content-Type says so; its bytes are zeros). */
export function bombAnswer(coding: "zstd" | "gzip", body: Uint8Array): () => Response {
  return () => new Response(new Blob([body as BlobPart]), { headers: { "Content-Type": ARROW, "Content-Encoding": coding } });
}

/** A body that never ends (no Content-Length), 1 MiB of zeros at a time. */
export function endlessAnswer(): Response {
  const chunk = new Uint8Array(MiB);
  const stream = new ReadableStream<Uint8Array>({ pull: (controller) => controller.enqueue(chunk) });
  return new Response(stream, { headers: { "Content-Type": ARROW } });
}

/**
 * A valid Arrow stream of `batches` identical record batches of 1 MiB (131,072 int64 rows each),
 * made as it is sent, so that neither side holds it; `bytes` is its exact content, for comparing.
 */
export function largeArrow(batches: number): { answer: () => Response; size: number; bytes(): Generator<Uint8Array> } {
  const rows = 131_072;
  const table = tableFromArrays({ n: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i)) });
  const one = tableToIPC(table, "stream");
  // A stream is its schema message, its batches' messages, then an 8-byte end marker.
  const schemaBytes = tableToIPC(new Table(table.schema), "stream").byteLength - 8;
  const schema = one.subarray(0, schemaBytes);
  const batch = one.subarray(schemaBytes, one.byteLength - 8);
  const end = one.subarray(one.byteLength - 8);
  function* bytes(): Generator<Uint8Array> {
    yield schema;
    for (let i = 0; i < batches; i++) yield batch;
    yield end;
  }
  return {
    size: schema.byteLength + batches * batch.byteLength + end.byteLength,
    bytes,
    answer: () => {
      const parts = bytes();
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = parts.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value.slice());
        },
      });
      return new Response(stream, { headers: { "Content-Type": ARROW } });
    },
  };
}
