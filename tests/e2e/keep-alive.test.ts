/**
 * `limits.keep_alive_seconds` through a real listening server (src/ops/keep-alive.ts): a connection
 * left idle after its response is closed, while a response that takes longer than that to read is
 * still sent whole (Bun's own idle timer would cut it: it counts from the last byte received).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { startServer, type RunningServer } from "../../src/server.ts";
import { typesConfig, typesDatabaseWithBigTable } from "../support/fixtures.ts";

let server: RunningServer;

beforeAll(async () => {
  // ~40 MB of Arrow: more than loopback's socket buffers hold, so the server is still sending it.
  const { dir, db } = typesDatabaseWithBigTable(300_000, { bytes: 64 });
  db.close();
  server = await startServer(typesConfig(dir, { tables: [{ name: "big" }, { name: "kinds" }], limits: { keep_alive_seconds: 1, query_timeout_ms: 30_000 } }), { workers: 2 });
});
afterAll(() => server.stop());

/** A raw HTTP/1.1 connection: what arrives, and whether the server has closed it. */
function open(): { socket: Socket; received: () => string; closed: Promise<void> } {
  const { hostname, port } = new URL(server.url);
  const socket = connect(Number(port), hostname);
  let text = "";
  socket.on("data", (bytes) => (text += bytes.toString("latin1")));
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  return { socket, received: () => text, closed };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await Bun.sleep(20);
  return done();
}

/** Resolves "closed" when the server closes the connection, "open" if it is still open after `ms`. */
const closedWithin = (closed: Promise<void>, ms: number) => Promise.race([closed.then(() => "closed"), Bun.sleep(ms).then(() => "open")]);

describe("keep_alive_seconds", () => {
  test("a connection serves several requests, then is closed once idle", async () => {
    const { socket, received, closed } = open();
    try {
      socket.write(get("/api/"));
      expect(await until(() => received().includes("\r\n\r\n{"), 5_000)).toBe(true);
      socket.write(get("/api/table/kinds"));
      expect(await until(() => received().split("HTTP/1.1 200 OK").length === 3, 5_000)).toBe(true);
      // Bun checks idle connections every few seconds: 1 s of idleness is noticed within ~8 s.
      expect(await closedWithin(closed, 10_000)).toBe("closed");
    } finally {
      socket.destroy();
    }
  }, 20_000);

  test("a response read more slowly than that is sent whole; the connection serves on, then is closed once idle", async () => {
    const { socket, closed } = open();
    let bytes = 0;
    let tail = "";
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
      tail = (tail + chunk.toString("latin1")).slice(-16);
      // A slow reader: several seconds for the whole body, several times the keep-alive time.
      socket.pause();
      setTimeout(() => socket.resume(), 80);
    });
    try {
      socket.write(get(`/api/query?query=${encodeURIComponent("SELECT * FROM big")}`));
      expect(await until(() => tail.endsWith("\r\n0\r\n\r\n"), 30_000)).toBe(true);
      expect(bytes).toBeGreaterThan(35_000_000);
      // After a stream its last chunk gets time to be sent too; a small answer gets the keep-alive time alone.
      const before = bytes;
      socket.write(get("/api/"));
      expect(await until(() => bytes > before && tail.endsWith("}"), 5_000)).toBe(true);
      expect(await closedWithin(closed, 10_000)).toBe("closed");
    } finally {
      socket.destroy();
    }
  }, 45_000);
});
