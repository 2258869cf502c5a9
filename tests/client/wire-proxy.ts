/**
 * An HTTP proxy in front of a real server that records each exchange as it crossed the wire: the
 * request headers the client sent, and the response's status, Content-Encoding, Content-Type and
 * raw body bytes exactly as the server sent them (it never decompresses: `decompress: false`). So
 * a test sees what compression was really used and can decode the raw bytes itself. It can also
 * rewrite the client's Accept-Encoding before forwarding, to make the real server answer with
 * another coding.
 */

export interface Exchange {
  /** The request's path, e.g. `/api/query`. */
  path: string;
  /** The request's headers as the client sent them (lowercase names). */
  request: Record<string, string>;
  status: number;
  contentEncoding: string | null;
  contentType: string | null;
  /** The body as it crossed the wire (still compressed when contentEncoding is set). */
  wire: Uint8Array;
}

export interface WireProxy {
  url: string;
  exchanges: Exchange[];
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host"]);

export function startWireProxy(upstream: string, options: { acceptEncoding?: string } = {}): WireProxy {
  const exchanges: Exchange[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const sent = Object.fromEntries(request.headers.entries());
      const headers = new Headers();
      for (const [name, value] of request.headers) if (!HOP_BY_HOP.has(name)) headers.set(name, value);
      if (options.acceptEncoding !== undefined) headers.set("accept-encoding", options.acceptEncoding);
      const answer = await fetch(upstream + url.pathname + url.search, { headers, decompress: false, redirect: "manual" });
      const wire = new Uint8Array(await answer.arrayBuffer());
      exchanges.push({
        path: url.pathname,
        request: sent,
        status: answer.status,
        contentEncoding: answer.headers.get("content-encoding"),
        contentType: answer.headers.get("content-type"),
        wire,
      });
      const back = new Headers();
      for (const [name, value] of answer.headers) if (!HOP_BY_HOP.has(name)) back.set(name, value);
      return new Response(wire, { status: answer.status, headers: back });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    exchanges,
    stop: () => server.stop(true),
  };
}
