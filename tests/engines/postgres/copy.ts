/**
 * Runs SELECTs on a real PostgreSQL as `COPY (<select>) TO STDOUT (FORMAT csv)`, the way the
 * PostgreSQL engine reads (no bind parameters), many in one psql session, and returns each one's
 * rows as text fields (null for NULL): the values exactly as PostgreSQL writes them, microseconds
 * and all.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBinDir } from "../../support/postgres.ts";

export type CopyRows = (string | null)[][];

const MARK = "@@copy ";

/**
 * `settings`: session settings for reading the output (e.g. extra_float_digits), on top of the
 * database's own. Throws with psql's message and the statement when one fails.
 */
export function copyOut(url: string, selects: string[], settings: Record<string, string>): CopyRows[] {
  if (selects.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), "arrow402-copy-"));
  try {
    const script = join(dir, "copy.sql");
    writeFileSync(script, selects.map((select, i) => `\\echo '${MARK}${i}'\nCOPY (${select}) TO STDOUT (FORMAT csv);\n`).join(""));
    const run = Bun.spawnSync([join(postgresBinDir(), "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", script], {
      env: { ...process.env, PGOPTIONS: Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`).join(" ") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = run.stdout.toString();
    if (run.exitCode !== 0) {
      const last = out.lastIndexOf(MARK);
      const index = last < 0 ? 0 : Number(out.slice(last + MARK.length).split("\n")[0]);
      throw new Error(`psql failed on ${selects[index]}: ${run.stderr.toString().trim()}`);
    }
    const blocks = out.split(new RegExp(`^${MARK}`, "m")).slice(1);
    return blocks.map((block) => parseCsv(block.slice(block.indexOf("\n") + 1)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** PostgreSQL's CSV: NULL is an empty unquoted field, an empty string is "". */
function parseCsv(text: string): CopyRows {
  const rows: CopyRows = [];
  let row: (string | null)[] = [];
  let i = 0;
  while (i < text.length) {
    let field: string | null;
    if (text[i] === '"') {
      let value = "";
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        value += text.slice(i, quote);
        i = quote + 1;
        if (text[i] === '"') {
          value += '"';
          i++;
        } else break;
      }
      field = value;
    } else {
      let end = i;
      while (end < text.length && text[end] !== "," && text[end] !== "\n") end++;
      field = end === i ? null : text.slice(i, end);
      i = end;
    }
    row.push(field);
    if (text[i] === ",") {
      i++;
      if (i === text.length || text[i] === "\n") row.push(null);
    }
    if (i >= text.length || text[i] === "\n") {
      rows.push(row);
      row = [];
      i++;
    }
  }
  return rows;
}
