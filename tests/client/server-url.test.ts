import { expect, test } from "bun:test";
import { endpoints, parseServerUrl } from "../../src/client/server-url.ts";

test("the server's address however it is written", () => {
  for (const text of ["http://localhost:4021", "http://localhost:4021/", "http://localhost:4021/api", "http://localhost:4021/api/", "localhost:4021"]) {
    expect(parseServerUrl(text)).toEqual({ ok: true, base: "http://localhost:4021" });
  }
  expect(parseServerUrl("https://data.example.com/prefix/api/")).toEqual({ ok: true, base: "https://data.example.com/prefix" });
  expect(parseServerUrl("ftp://example.com").ok).toBe(false);
  expect(parseServerUrl("http://").ok).toBe(false);
});

test("endpoints encode names and SQL", () => {
  expect(endpoints.table("http://h", "a b")).toBe("http://h/api/table/a%20b");
  expect(endpoints.query("http://h", "SELECT * FROM t WHERE x = 'a&b'")).toBe("http://h/api/query?query=SELECT%20*%20FROM%20t%20WHERE%20x%20%3D%20'a%26b'");
});
