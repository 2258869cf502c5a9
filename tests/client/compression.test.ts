/**
 * The client's side of HTTP compression (src/client/content-coding.ts, http.ts) against real HTTP
 * servers on 127.0.0.1. The real arrow402 server is covered end to end in tests/e2e/client.test.ts;
 * here are the answers it never gives (stacked codings, a coding not asked for, damaged compressed
 * bytes, a compressed body cut mid-way, bodies over the bound), from small servers written to give them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { ACCEPT_ENCODING, readContentEncoding } from "../../src/client/content-coding.ts";
import { send, SMALL_BODY_MAX_BYTES } from "../../src/client/http.ts";
import { tempDir } from "../support/fixtures.ts";

const BODY = new TextEncoder().encode(Array.from({ length: 4000 }, (_, i) => `row ${i},${i * 7}\n`).join(""));

/** 64 MiB of zeros, compressed: 2 KB of zstd, 64 KB of gzip. */
const ZEROS = new Uint8Array(64 * 1024 ** 2);
const ZSTD_BOMB = Bun.zstdCompressSync(ZEROS);
const GZIP_BOMB = Bun.gzipSync(ZEROS);
/** 2 MiB of zstd skippable frames (which decode to nothing), then "hello". */
const SKIPPABLE = Buffer.concat([
  ...Array.from({ length: 32 }, () => {
    const frame = new Uint8Array(8 + 65_536);
    new DataView(frame.buffer).setUint32(0, 0x184d2a50, true);
    new DataView(frame.buffer).setUint32(4, 65_536, true);
    return frame;
  }),
  Bun.zstdCompressSync(new TextEncoder().encode("hello")),
]);

describe("Content-Encoding", () => {
  test.each([
    [null, []],
    ["", []],
    ["identity", []],
    ["zstd", ["zstd"]],
    ["gzip", ["gzip"]],
    ["x-gzip", ["gzip"]],
    ["GZIP", ["gzip"]],
    ["gzip, zstd", ["gzip", "zstd"]],
  ] as const)("%p is undone as %p", (header, codings) => {
    expect(readContentEncoding(header)).toEqual({ ok: true, codings: [...codings] });
  });

  test.each(["br", "deflate", "compress", "gzip, br"])("%p was not asked for: refused, naming it", (header) => {
    const read = readContentEncoding(header);
    expect(read.ok).toBe(false);
    expect(!read.ok && read.reason).toContain(`which this client did not ask for (it accepts ${ACCEPT_ENCODING})`);
  });
});

describe("send", () => {
  const seen: (string | null)[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      seen.push(request.headers.get("accept-encoding"));
      const route = new URL(request.url).pathname;
      const blob = (bytes: Uint8Array) => new Blob([bytes as BlobPart]);
      const headers = (encoding: string) => ({ "content-encoding": encoding, "content-type": "text/plain" });
      switch (route) {
        case "/plain":
          return new Response(BODY);
        case "/zstd":
          return new Response(blob(Bun.zstdCompressSync(BODY)), { headers: headers("zstd") });
        case "/gzip":
          return new Response(blob(Bun.gzipSync(BODY)), { headers: headers("gzip") });
        case "/stacked":
          return new Response(blob(Bun.zstdCompressSync(Bun.gzipSync(BODY))), { headers: headers("gzip, zstd") });
        case "/damaged": {
          const bytes = Bun.zstdCompressSync(BODY);
          return new Response(blob(bytes.subarray(0, bytes.byteLength - 10)), { headers: headers("zstd") });
        }
        case "/brotli":
          return new Response(BODY, { headers: headers("br") });
        case "/zstd-bomb":
          return new Response(blob(ZSTD_BOMB), { headers: headers("zstd") });
        case "/gzip-bomb":
          return new Response(blob(GZIP_BOMB), { headers: headers("gzip") });
        case "/skippable":
          // A stream, so without a Content-Length: counted as it arrives.
          return new Response(new ReadableStream({ pull: (controller) => (controller.enqueue(SKIPPABLE), controller.close()) }), { headers: headers("zstd") });
        case "/large-error":
          return new Response("x".repeat(SMALL_BODY_MAX_BYTES + 1), { status: 500 });
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
  afterAll(() => server.stop(true));
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  test("asks for zstd and gzip, and answers the exact bytes of an uncompressed body", async () => {
    const sent = await send(url("/plain"));
    expect(seen.at(-1)).toBe(ACCEPT_ENCODING);
    expect(sent.ok && sent.answer.body).toEqual(BODY);
    expect(sent.ok && sent.answer.wireBytes).toBe(BODY.byteLength);
  });

  test.each(["/zstd", "/gzip", "/stacked"])("%s: decompressed once, to the exact bytes; progress counts the wire", async (path) => {
    const progress: number[] = [];
    const sent = await send(url(path), { onProgress: (bytes) => progress.push(bytes) });
    if (!sent.ok) throw new Error(sent.reason);
    expect(sent.answer.body).toEqual(BODY);
    expect(sent.answer.wireBytes).toBeLessThan(BODY.byteLength / 2);
    expect(progress.at(-1)).toBe(sent.answer.wireBytes);
    expect(sent.answer.headers.get("content-encoding")).not.toBeNull();
  });

  test("a compressed body that arrived whole but does not decode is an unread answer, saying so", async () => {
    const sent = await send(url("/damaged"));
    expect(sent.ok).toBe(false);
    expect(!sent.ok && sent.reason).toStartWith("the zstd-compressed answer does not decompress (");
  });

  test("a coding that was not asked for is an unread answer, naming it", async () => {
    const sent = await send(url("/brotli"));
    expect(sent).toEqual({ ok: false, reason: `the answer is compressed as 'br', which this client did not ask for (it accepts ${ACCEPT_ENCODING})`, lost: true });
  });

  describe("the bound on a body (DESIGN §17)", () => {
    const dir = tempDir("arrow402-client-bound-");
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const MB = 1_000_000;

    test.each([
      ["/zstd-bomb", 10 * MB, "the zstd-compressed answer is larger than 10 MB (10000000 bytes) once decompressed"],
      ["/gzip-bomb", 10 * MB, "the gzip-compressed answer is larger than 10 MB (10000000 bytes) once decompressed"],
      ["/skippable", MB, "the zstd-compressed answer is larger than 1 MB (1000000 bytes) as sent"],
      ["/plain", 1000, "the answer is larger than 1 kB (1000 bytes), by its Content-Length"],
    ])("%s: refused past maxBytes, as not to be sent for again", async (path, maxBytes, reason) => {
      const sent = await send(url(path), { maxBytes, overBoundAdvice: "raise it" });
      expect(sent).toEqual({ ok: false, reason: `${reason}: raise it`, lost: false });
    });

    test("an answer within the bound is read whole", async () => {
      const sent = await send(url("/zstd-bomb"), { maxBytes: ZEROS.byteLength });
      expect(sent.ok && sent.answer.bodyBytes).toBe(ZEROS.byteLength);
      const skipped = await send(url("/skippable"), { maxBytes: 4 * MB });
      expect(skipped.ok && new TextDecoder().decode(skipped.answer.body)).toBe("hello");
    });

    test("an error's body is held to its own, smaller bound", async () => {
      const sent = await send(url("/large-error"));
      expect(sent).toEqual({ ok: false, reason: `the server's 500 answer is larger than 1 MiB (1048576 bytes), by its Content-Length, more than an error or payment document needs`, lost: false });
    });

    test("toFile: a 200's body is written to the file as it arrives, replacing what was there, and not held", async () => {
      const file = join(dir, "body");
      writeFileSync(file, "x".repeat(BODY.byteLength * 2));
      const sent = await send(url("/gzip"), { toFile: file });
      if (!sent.ok) throw new Error(sent.reason);
      expect(sent.answer.body.byteLength).toBe(0);
      expect(sent.answer.bodyBytes).toBe(BODY.byteLength);
      expect(new Uint8Array(readFileSync(file))).toEqual(BODY);
    });
  });
});

describe("a compressed body cut mid-way", () => {
  let tcp: Server;
  afterAll(() => tcp?.close());

  test("is a broken connection (the case a paid request is resent for), not a decoding fault", async () => {
    const compressed = Bun.zstdCompressSync(BODY);
    tcp = createServer((socket) => {
      socket.once("data", () => {
        const head = `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-encoding: zstd\r\ncontent-length: ${compressed.byteLength}\r\n\r\n`;
        socket.write(head);
        socket.write(compressed.subarray(0, compressed.byteLength >> 1), () => socket.destroy());
      });
    });
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    const address = tcp.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    const origin = `http://127.0.0.1:${address.port}`;
    const sent = await send(`${origin}/api/query`);
    expect(sent.ok).toBe(false);
    expect(!sent.ok && sent.reason).toStartWith(`the connection to ${origin} failed (`);
  });
});
