/**
 * A client that stops reading, on a raw socket (ARCHITECTURE.md §11 "Hostile clients"): fetch would
 * read ahead into its own buffers, so only a socket left paused makes the server wait for it.
 */
import { expect } from "bun:test";
import { connect, type Socket } from "node:net";

/**
 * An HTTP/1.1 GET on a raw socket that reads nothing until `resume()`: a stalled reader. `resume`
 * gives every byte received until the connection ended, however it ended.
 */
export function stalledGet(url: string, headers: Record<string, string> = {}): { resume(): Promise<Buffer> } {
  const { hostname, port, pathname, search } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  socket.write(`GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${extra}\r\n`);
  socket.pause();
  return {
    resume() {
      const chunks: Buffer[] = [];
      return new Promise((resolve) => {
        socket.on("data", (chunk: Buffer) => chunks.push(chunk));
        socket.on("close", () => resolve(Buffer.concat(chunks)));
        socket.on("error", () => {});
        socket.resume();
      });
    },
  };
}

/** The body of a chunked HTTP/1.1 response. */
export function dechunk(raw: Buffer): Uint8Array {
  const headerEnd = raw.indexOf("\r\n\r\n");
  const head = raw.subarray(0, headerEnd).toString();
  expect(head).toStartWith("HTTP/1.1 200");
  let rest = raw.subarray(headerEnd + 4);
  if (!/transfer-encoding: chunked/i.test(head)) return rest;
  const parts: Buffer[] = [];
  for (;;) {
    const line = rest.indexOf("\r\n");
    const size = parseInt(rest.subarray(0, line).toString(), 16);
    if (size === 0) break;
    parts.push(rest.subarray(line + 2, line + 2 + size));
    rest = rest.subarray(line + 2 + size + 2);
  }
  return Buffer.concat(parts);
}
