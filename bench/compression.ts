/**
 * Item 5: the free 1M-row export with no compression, `Accept-Encoding: zstd` and `gzip`, end to
 * end (the client decompresses as the body streams in, then decodes), runs rotating which coding
 * goes first. No target: bytes on the wire and time, each also as a ratio of the uncompressed
 * export's.
 */
import { queryUrl, readArrow, type ArrowRead, type Coding } from "./arrow-client.ts";
import type { ChildServer } from "./processes.ts";
import { mb, ms, runsOf, type SectionResult } from "./report.ts";
import { median } from "./stats.ts";

const CODINGS: Coding[] = ["identity", "zstd", "gzip"];

export async function measureCompression(server: ChildServer, sql: string, rowCount: number, runs: number): Promise<SectionResult> {
  const url = queryUrl(server.url, sql);
  const reads = new Map<Coding, ArrowRead[]>(CODINGS.map((coding) => [coding, []]));
  // One unmeasured export in each coding warms the server and the client's decompressors.
  for (const coding of CODINGS) await readArrow(url, { coding, expectedRows: rowCount });
  for (let run = 0; run < runs; run++) {
    const order = CODINGS.map((_, i) => CODINGS[(i + run) % CODINGS.length]!);
    for (const coding of order) {
      Bun.gc(true);
      reads.get(coding)!.push(await readArrow(url, { coding, expectedRows: rowCount }));
    }
  }
  const medianOf = (coding: Coding, field: "totalMs" | "wireBytes" | "firstByteMs") => median(reads.get(coding)!.map((r) => r[field]));
  const plainMs = medianOf("identity", "totalMs");
  const plainBytes = medianOf("identity", "wireBytes");
  const nameOf = (coding: Coding) => (coding === "identity" ? "none" : coding);
  return {
    checks: [],
    tables: [
      {
        title: `Compression (item 5): free ${rowCount}-row export of \`transfers\`, end to end, medians of ${runs} runs`,
        rows: [
          ["Accept-Encoding", "bytes on the wire", "vs uncompressed", "time (read + decompress + decode)", "vs uncompressed", "first byte"],
          ...CODINGS.map((coding) => [
            nameOf(coding),
            mb(medianOf(coding, "wireBytes")),
            `${(medianOf(coding, "wireBytes") / plainBytes).toFixed(2)}×`,
            ms(medianOf(coding, "totalMs")),
            `${(medianOf(coding, "totalMs") / plainMs).toFixed(2)}×`,
            ms(medianOf(coding, "firstByteMs")),
          ]),
        ],
      },
    ],
    details: CODINGS.map((coding) => ({
      item: "5",
      name: `export with Accept-Encoding ${nameOf(coding)}: runs`,
      value: runsOf(reads.get(coding)!.map((r) => r.totalMs), ms),
    })),
  };
}
