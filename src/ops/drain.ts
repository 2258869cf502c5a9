/**
 * Graceful shutdown (ARCHITECTURE.md §9 "shutdown drains", §11): stop accepting connections, let the
 * requests in flight finish — a paid request in settlement completes and is recorded, a streamed
 * body is sent to its end — for at most `deadlineMs`, then cut what is left. The caller closes the
 * query workers and the payment store afterwards, once nothing can use them any more.
 */
import type { Server } from "bun";
import { withDeadline } from "../deadline.ts";
import type { AppHolder } from "./app-holder.ts";

export interface DrainResult {
  /** Requests still running at the deadline, whose connections were closed. */
  cut: number;
}

export async function drain(server: Server<unknown>, holder: AppHolder, deadlineMs: number): Promise<DrainResult> {
  // Stops listening at once; resolves when every connection's request and body are done.
  const connections = server.stop(false);
  const finished = await withDeadline(() => Promise.all([connections, holder.idle()]).then(() => true), deadlineMs, () => false);
  if (finished) return { cut: 0 };
  const cut = Math.max(server.pendingRequests, holder.handlers);
  await server.stop(true);
  return { cut };
}
