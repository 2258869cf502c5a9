/**
 * Background load for the responsiveness figure (item 2), on its own thread so the latency probe
 * on the main thread is not delayed by the client's own reading: runs `parallel` requests at once,
 * reading every body to the end, and reports when all are done (or the first failure).
 */
declare const self: Worker;

export interface LoadJob {
  url: string;
  parallel: number;
}

export type LoadDone = { bytes: number[]; ms: number } | { error: string };

async function readAll(url: string): Promise<number> {
  // Uncompressed, as the export figures are (Bun's fetch would otherwise ask for zstd).
  const response = await fetch(url, { headers: { "accept-encoding": "identity" }, decompress: false } as RequestInit);
  if (response.status !== 200) throw new Error(`a background export got ${response.status}: ${(await response.text()).slice(0, 300)}`);
  let bytes = 0;
  for await (const chunk of response.body!) bytes += chunk.byteLength;
  return bytes;
}

self.onmessage = async (event: MessageEvent<LoadJob>) => {
  const { url, parallel } = event.data;
  const start = performance.now();
  try {
    const bytes = await Promise.all(Array.from({ length: parallel }, () => readAll(url)));
    self.postMessage({ bytes, ms: performance.now() - start } satisfies LoadDone);
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? error.message : String(error) } satisfies LoadDone);
  }
};
