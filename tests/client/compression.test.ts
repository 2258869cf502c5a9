/**
 * The client's side of HTTP compression (src/client/content-coding.ts, http.ts) against real HTTP
 * servers on 127.0.0.1. The real arrow402 server is covered end to end in tests/e2e/client.test.ts;
 * here are the answers it never gives (stacked codings, a coding not asked for, damaged compressed
 * bytes, a compressed body cut mid-way), from small servers written to give them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { ACCEPT_ENCODING, readContentEncoding } from "../../src/client/content-coding.ts";
import { send } from "../../src/client/http.ts";

const BODY = new TextEncoder().encode(Array.from({ length: 4000 }, (_, i) => `row ${i},${i * 7}\n`).join(""));

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
    expect(sent).toEqual({ ok: false, reason: `the answer is compressed as 'br', which this client did not ask for (it accepts ${ACCEPT_ENCODING})` });
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
