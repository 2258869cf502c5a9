/**
 * HTTP compression on the buyer's side (ARCHITECTURE.md §13): every request asks for zstd or gzip, and
 * the body is decompressed here, as it arrives, exactly once. Bun's fetch would decompress by
 * itself (and send its own Accept-Encoding), so requests are made with `decompress: false`: what
 * is asked for, what is undone, and the bytes counted on the wire are then all this module's.
 */

/** What every request of the client accepts, in order of preference (the server prefers zstd too). */
export const ACCEPT_ENCODING = "zstd, gzip";

type Coding = "zstd" | "gzip";

/** `x-gzip` is gzip (RFC 9110 §8.4.1.3); `identity` means none. */
const CODINGS: Readonly<Record<string, Coding | null>> = { zstd: "zstd", gzip: "gzip", "x-gzip": "gzip", identity: null };

export type Decoding = { ok: true; codings: Coding[] } | { ok: false; reason: string };

/** The codings to undo, in the order they were applied, from a `Content-Encoding` header. */
export function readContentEncoding(header: string | null): Decoding {
  if (header === null || header.trim() === "") return { ok: true, codings: [] };
  const codings: Coding[] = [];
  for (const part of header.split(",")) {
    const name = part.trim().toLowerCase();
    if (!(name in CODINGS)) {
      return { ok: false, reason: `the answer is compressed as '${name.slice(0, 40)}', which this client did not ask for (it accepts ${ACCEPT_ENCODING})` };
    }
    const coding = CODINGS[name];
    if (coding) codings.push(coding);
  }
  return { ok: true, codings };
}

/** The body with every coding undone, last applied first, decoded as the wire bytes arrive. */
export function decodedStream(wire: ReadableStream<Uint8Array>, codings: Coding[]): ReadableStream<Uint8Array> {
  let stream = wire;
  for (const coding of codings.toReversed()) {
    stream = stream.pipeThrough(new DecompressionStream(coding as CompressionFormat) as unknown as TransformStream<Uint8Array, Uint8Array>);
  }
  return stream;
}
