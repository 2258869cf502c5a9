/** The server's address as the user writes it (`http://host:4021`, `…/`, `…/api/`) → its endpoints. */

export type ServerUrlParse = { ok: true; base: string } | { ok: false; reason: string };

export function parseServerUrl(text: string): ServerUrlParse {
  let url: URL;
  try {
    url = new URL(text.includes("://") ? text : `http://${text}`);
  } catch {
    return { ok: false, reason: `'${text}' is not a URL: write the server's address, e.g. http://localhost:4021` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `'${text}' is not an http(s) URL` };
  }
  const path = url.pathname.replace(/\/+$/, "").replace(/\/api$/, "");
  return { ok: true, base: `${url.origin}${path}` };
}

export const endpoints = {
  discovery: (base: string) => `${base}/api/`,
  table: (base: string, name: string) => `${base}/api/table/${encodeURIComponent(name)}`,
  query: (base: string, sql: string) => `${base}/api/query?query=${encodeURIComponent(sql)}`,
};
