/** The benchmark's HTTP client: reads a whole Arrow response body, timing it, and decodes it. */
import { tableFromIPC } from "apache-arrow";

export interface ArrowRead {
  /** From the request to the first body bytes. */
  firstByteMs: number;
  /** From the request to the decoded table. */
  totalMs: number;
  bytes: number;
  rows: number;
  chunks: number;
}

export function queryUrl(baseUrl: string, sql: string): string {
  return `${baseUrl}/api/query?query=${encodeURIComponent(sql)}`;
}

/** GETs `url`, reads every chunk as it arrives, then decodes the stream with apache-arrow. */
export async function readArrow(url: string, init?: RequestInit): Promise<ArrowRead> {
  const start = performance.now();
  const response = await fetch(url, init);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let firstByteMs = NaN;
  let bytes = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (chunks.length === 0) firstByteMs = performance.now() - start;
    chunks.push(value);
    bytes += value.byteLength;
  }
  const table = tableFromIPC(Buffer.concat(chunks, bytes));
  const totalMs = performance.now() - start;
  return { firstByteMs, totalMs, bytes, rows: table.numRows, chunks: chunks.length };
}
