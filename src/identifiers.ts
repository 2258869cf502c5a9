/**
 * How SQLite compares identifiers: ignoring the case of ASCII letters only (sqlite3StrICmp). `"A"`
 * and `"a"` name one column; `"É"` and `"é"` are two. Every comparison of table or column names
 * (the catalog's lookups, the config's duplicates, the dialect's names) folds with this, never with
 * toLowerCase(), which folds every script and would merge names SQLite keeps apart.
 */
export function foldCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

export function sameName(a: string, b: string): boolean {
  return foldCase(a) === foldCase(b);
}
