/**
 * Answers a hostile server gives a buyer (lying-server.ts `answer`): text that would take over the
 * terminal, bodies that would take over memory, and a large honest answer to compare with.
 */
import type { PaymentRequired } from "@x402/core/types";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import { Table, tableFromArrays, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";

export const ARROW = "application/vnd.apache.arrow.stream";

/** Escape sequences a server could slip into a value, a name or a message, by what they would do. */
export const SEQUENCES = {
  /** CSI: cursor up one line and erase it — the "Paid …" line printed just before the data. */
  eraseLine: "\x1b[1A\x1b[2K",
  /** OSC 52: write "pwned" to the clipboard, ended by BEL. */
  clipboard: "\x1b]52;c;cHduZWQ=\x07",
  /** CSI as its one-character C1 form: clear the screen. */
  c1: "\u009b2J",
  /** DCS, ended by ST. */
  dcs: "\x1bP+q544e\x1b\\",
  /** A carriage return that overwrites the line with a receipt of its own. */
  overwrite: "\rPaid 0 USDC",
  /** The right-to-left override, which shows text reversed. */
  bidi: "\u202eDSU 01",
} as const;

export const HOSTILE = Object.values(SEQUENCES).join("");

/** Any character that must not reach a terminal raw (tab and line feed are layout). */
export const UNSAFE_CHAR = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** How the client shows HOSTILE: every control and override as a `\u{…}` escape. */
export const HOSTILE_SHOWN = HOSTILE.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

/** An Arrow answer whose column name and values hold the sequences. */
export function hostileValues(): Response {
  const values = [...Object.values(SEQUENCES), HOSTILE];
  const bytes = tableToIPC(new Table({ [`name${SEQUENCES.eraseLine}`]: vectorFromArray(values, new Utf8()) }), "stream");
  return new Response(new Blob([bytes as BlobPart]), { headers: { "Content-Type": ARROW } });
}

/** A 402 after payment whose `error` holds the sequences. */
export function hostileRefusal(required: PaymentRequired): Response {
  const refused = { ...required, error: `settlement failed${HOSTILE}` };
  return Response.json(refused, { status: 402, headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(refused) } });
}

/** A 400 or 500 whose text holds the sequences. */
export function hostileError(status: number): () => Response {
  return () => new Response(`no such column${HOSTILE}`, { status, headers: { "Content-Type": "text/plain" } });
}

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
