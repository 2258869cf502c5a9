import { readArrow, queryUrl } from "./arrow-client.ts";
const sql = "SELECT id, block, ts, address, amount, nonce FROM transfers";
const urls = { old: queryUrl("http://127.0.0.1:4558", sql), new: queryUrl("http://127.0.0.1:4557", sql) };
const res: Record<string, number[]> = { old: [], new: [] };
for (const k of ["old", "new"] as const) await readArrow(urls[k]);
for (let i = 0; i < 8; i++) for (const k of (i % 2 ? ["old", "new"] : ["new", "old"]) as ("old" | "new")[]) { Bun.gc(true); res[k]!.push((await readArrow(urls[k], { expectedRows: 1_000_000 })).totalMs); }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log("old", res.old!.map((v) => v.toFixed(0)).join(" "), "median", med(res.old!).toFixed(0));
console.log("new", res.new!.map((v) => v.toFixed(0)).join(" "), "median", med(res.new!).toFixed(0));
