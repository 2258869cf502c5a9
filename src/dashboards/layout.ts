/**
 * The HTML frame shared by the landing page and the dashboards: semantic landmarks, viewport
 * meta for phones, `color-scheme` for light and dark, and nothing loaded from another origin.
 * Arguments are HTML already escaped by the caller, except `title`, escaped here.
 */
import { escapeHtml } from "./html.ts";

export interface PageParts {
  title: string;
  /** `<style>…</style>` or `<link rel="stylesheet" …>`. */
  styles: string;
  header: string;
  main: string;
  footer: string;
  /** Script elements placed at the end of the body. */
  scripts?: string;
}

export function renderPage(parts: PageParts): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="arrow402">
<link rel="icon" href="data:,">
<title>${escapeHtml(parts.title)}</title>
${parts.styles}
</head>
<body>
<header class="site-header">
<div class="wrap">
${parts.header}
</div>
</header>
<main class="wrap">
${parts.main}
</main>
<footer class="site-footer">
<div class="wrap">
${parts.footer}
</div>
</footer>
${parts.scripts ?? ""}
</body>
</html>
`;
}

export function renderTags(tags: string[]): string {
  if (tags.length === 0) return "";
  return `<ul class="tags" aria-label="Tags">${tags.map((t) => `<li>${escapeHtml(t)}</li>`).join("")}</ul>`;
}

/** "2025-01-31 14:05 UTC": unambiguous for readers in any time zone. */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
