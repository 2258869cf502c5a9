/**
 * HTTP for the client: one GET whose whole body is read before it counts as answered, so a
 * connection lost mid-body is a network failure like a refused connection — the case in which a
 * paid request is retried with the same payment (DESIGN.md §6 replay rule).
 */

export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

export type Sent = { ok: true; answer: Answer } | { ok: false; reason: string };

export interface SendOptions {
  headers?: Record<string, string>;
  /** Called with the bytes received so far, as they arrive. */
  onProgress?: (bytes: number) => void;
  timeoutMs?: number;
}

export async function send(url: string, options: SendOptions = {}): Promise<Sent> {
  try {
    const response = await fetch(url, {
      headers: options.headers ?? {},
      redirect: "follow",
      ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
    });
    const body = await readBody(response, options.onProgress);
    return { ok: true, answer: { status: response.status, headers: response.headers, body } };
  } catch (error) {
    return { ok: false, reason: networkReason(url, error) };
  }
}

async function readBody(response: Response, onProgress?: (bytes: number) => void): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    total += chunk.byteLength;
    onProgress?.(total);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function networkReason(url: string, error: unknown): string {
  const origin = safeOrigin(url);
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  if (code === "ConnectionRefused" || code === "ECONNREFUSED") return `cannot connect to ${origin} (connection refused)`;
  if (error instanceof DOMException && error.name === "TimeoutError") return `no answer from ${origin} in time`;
  // Bun appends advice about its own `verbose` option, which is no use to the user here.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.? For more information, pass `verbose: true`.*$/s, "");
  return `the connection to ${origin} failed (${message})`;
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Text of a plain-text (or JSON `{error}`) error body, on one line. */
export function errorText(answer: Answer): string {
  const text = new TextDecoder().decode(answer.body).trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed && typeof parsed.error === "string") return oneLine(parsed.error);
  } catch {
    // plain text
  }
  return oneLine(text) || `HTTP ${answer.status}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").slice(0, 2000);
}
