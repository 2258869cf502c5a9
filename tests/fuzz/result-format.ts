/**
 * Whether a query result is what its Content-Type and Content-Encoding say (README "Output
 * formats", DESIGN.md §13): an Arrow IPC stream with its end-of-stream marker, a JSON array, NDJSON
 * lines, CSV with its header line, a Parquet file; gzip or zstd that decompress.
 */
import { tableFromIPC } from "apache-arrow";
import type { RawResponse } from "./raw-http.ts";

/** The body without its content coding (gzip, zstd); throws when it does not decompress. */
function decoded(response: RawResponse): Uint8Array {
  const coding = response.headers["content-encoding"];
  return coding === "gzip" ? Bun.gunzipSync(response.body as Uint8Array<ArrayBuffer>) : coding === "zstd" ? Bun.zstdDecompressSync(response.body as Uint8Array<ArrayBuffer>) : response.body;
}

/**
 * Whether a well-formed query result holds no rows (README "Zero": an empty result priced at 0 is
 * served free). Parquet and anything unreadable count as holding rows.
 */
export function holdsNoRows(response: RawResponse): boolean {
  const type = (response.headers["content-type"] ?? "").split(";")[0]!.trim();
  try {
    const body = decoded(response);
    const text = () => new TextDecoder().decode(body);
    switch (type) {
      case "application/vnd.apache.arrow.stream":
        return tableFromIPC(body).numRows === 0;
      case "application/json":
        return text().trim() === "[]";
      case "application/x-ndjson":
        return body.length === 0;
      case "text/csv":
        return text().split("\r\n").filter((line) => line !== "").length <= 1;
      default:
        return false;
    }
  } catch {
    return false;
  }
}

/** Why a query result's body is not a well-formed instance of its format (after its content coding), or null. */
export function resultProblem(response: RawResponse): string | null {
  const type = (response.headers["content-type"] ?? "").split(";")[0]!.trim();
  const coding = response.headers["content-encoding"];
  let body: Uint8Array;
  try {
    body = decoded(response);
  } catch (error) {
    return `a ${coding} body that does not decompress: ${String(error)}`;
  }
  if (coding !== undefined && coding !== "gzip" && coding !== "zstd") return `content coding '${coding}', which the README does not offer`;
  const text = () => new TextDecoder("utf-8", { fatal: true }).decode(body);
  try {
    switch (type) {
      case "application/vnd.apache.arrow.stream": {
        // The stream's end-of-stream marker (Arrow IPC: continuation 0xFFFFFFFF, then length 0).
        const end = [...body.subarray(body.length - 8)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
        if (end !== "ffffffff00000000") return "an Arrow stream without its end-of-stream marker";
        tableFromIPC(body);
        return null;
      }
      case "application/json":
        return Array.isArray(JSON.parse(text())) ? null : "a JSON result that is not an array of rows";
      case "application/x-ndjson":
        for (const line of text().split("\n").slice(0, -1)) JSON.parse(line);
        return text() === "" || text().endsWith("\n") ? null : "an NDJSON result whose last line does not end in LF";
      case "text/csv":
        return text().includes("\r\n") ? null : "a CSV result without its header line";
      case "application/vnd.apache.parquet": {
        const magic = (at: number) => new TextDecoder().decode(body.subarray(at, at + 4));
        return magic(0) === "PAR1" && magic(body.length - 4) === "PAR1" ? null : "a Parquet result without the PAR1 magic at both ends";
      }
      default:
        return `a query result of content type '${type}', which is none of the README's formats`;
    }
  } catch (error) {
    return `a ${type} result that does not parse: ${String(error).slice(0, 200)}`;
  }
}
