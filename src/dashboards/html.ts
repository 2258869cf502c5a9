/**
 * Escaping for the generated pages. Everything that comes from the config or the data goes
 * through one of these two functions before it reaches HTML (ARCHITECTURE.md §7).
 */

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Safe in element content and in quoted attribute values. */
export function escapeHtml(value: string | number | bigint): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` are written as
 * unicode escapes so that no value can close the script element or open a comment.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
