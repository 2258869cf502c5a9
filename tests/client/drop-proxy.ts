/**
 * A TCP proxy in front of a real server that loses the answer to the first paid request: it
 * forwards the request (so the server verifies, settles and records the payment), passes on the
 * answer's head and part of its body, then cuts the connection — the "lost response after
 * settlement" of ARCHITECTURE.md §6. (Cutting before any byte is not enough: HTTP clients resend an
 * idempotent GET by themselves when a reused connection closes unanswered.) Every other exchange
 * is forwarded unchanged.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface DropProxy {
  url: string;
  /** Paid requests seen (requests carrying PAYMENT-SIGNATURE). */
  paidRequests(): number;
  stop(): Promise<void>;
}

export async function startDropProxy(upstream: string): Promise<DropProxy> {
  const target = new URL(upstream);
  let paid = 0;
  let dropped = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const server = connect(Number(target.port), target.hostname);
    sockets.add(client).add(server);
    let dropThis = false;
    client.on("data", (chunk: Buffer) => {
      if (/payment-signature:/i.test(chunk.toString("latin1"))) {
        paid += 1;
        if (!dropped) {
          dropped = true;
          dropThis = true;
        }
      }
      server.write(chunk);
    });
    let held = Buffer.alloc(0);
    server.on("data", (chunk: Buffer) => {
      if (!dropThis) {
        client.write(chunk);
        return;
      }
      held = Buffer.concat([held, chunk as Buffer]);
      const headEnd = held.indexOf("\r\n\r\n");
      if (headEnd === -1 || held.length <= headEnd + 4) return;
      const bodySoFar = held.length - (headEnd + 4);
      client.write(held.subarray(0, headEnd + 4 + Math.ceil(bodySoFar / 2)), () => {
        client.destroy();
        server.destroy();
      });
      dropThis = false;
      server.pause();
    });
    const close = () => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on("close", close).on("error", close);
    server.on("close", close).on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    paidRequests: () => paid,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
