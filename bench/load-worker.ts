/**
 * Background load for item 3, on its own thread so the latency probe on the main thread is not
 * delayed by the client's own reading: runs `parallel` requests at once, reading every body to
 * the end, and reports when all are done.
 */
declare const self: Worker;

export interface LoadJob {
  url: string;
  parallel: number;
}

export interface LoadDone {
  bytes: number[];
  ms: number;
}

async function readAll(url: string): Promise<number> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  let bytes = 0;
  for await (const chunk of response.body!) bytes += chunk.byteLength;
  return bytes;
}

self.onmessage = async (event: MessageEvent<LoadJob>) => {
  const { url, parallel } = event.data;
  const start = performance.now();
  const bytes = await Promise.all(Array.from({ length: parallel }, () => readAll(url)));
  self.postMessage({ bytes, ms: performance.now() - start } satisfies LoadDone);
};
