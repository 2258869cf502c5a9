/**
 * Reads the YAML text of a config file with Bun.YAML. Bun's parse error carries no position, so
 * the line is estimated: the error is near the first line after the longest prefix of the file
 * that still parses (a prefix that only ends inside an unfinished construct, like an open `[`,
 * is skipped over because a longer prefix parses again).
 */

/** Files longer than this are not scanned for the error line (the scan parses every prefix). */
const MAX_LINES_TO_LOCATE = 5000;

function parses(text: string): boolean {
  try {
    Bun.YAML.parse(text);
    return true;
  } catch {
    return false;
  }
}

function errorLine(text: string): number | undefined {
  const lines = text.split(/\r?\n/);
  if (lines.length > MAX_LINES_TO_LOCATE) return undefined;
  for (let count = lines.length - 1; count >= 0; count--) {
    if (parses(lines.slice(0, count).join("\n"))) return count + 1;
  }
  return undefined;
}

export type YamlParse = { ok: true; value: unknown } | { ok: false; line: number | undefined; message: string };

export function parseYaml(text: string): YamlParse {
  try {
    return { ok: true, value: Bun.YAML.parse(text) };
  } catch (error) {
    const detail = (error instanceof Error ? error.message : String(error)).replace(/^YAML Parse error:\s*/i, "");
    return { ok: false, line: errorLine(text), message: `invalid YAML (${detail}); check indentation, quoting and brackets` };
  }
}
