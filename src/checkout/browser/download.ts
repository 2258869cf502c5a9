/** Saving a bought file (ARCHITECTURE.md §15): named from the table and the format, kept in the page for "Save again". */

/** `swaps` + `parquet` → `swaps.parquet`; the table named in the SQL's FROM, when it names one, else the page's. */
export function fileNameFor(table: string, sql: string, extension: string, suffix = ""): string {
  const from = /\bfrom\s+(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_]*))/i.exec(sql);
  const name = from ? (from[1]?.replaceAll('""', '"') ?? from[2]!) : table;
  const stem = name.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "") || "result";
  return `${stem}${suffix}.${extension}`;
}

/** Starts the browser's download of `body` as `name`; the returned URL stays valid for the page's life. */
export function save(body: Blob, name: string): string {
  const url = URL.createObjectURL(body);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  return url;
}
