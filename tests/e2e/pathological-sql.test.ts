/**
 * Query texts that once froze the whole server (ARCHITECTURE.md §4 "Validation is bounded"): through a
 * real server, each is answered 400 quickly with a message naming what to change, while
 * `GET /api/` keeps answering. The parser backtracks, and its slowest shapes (nested '((', LIKE
 * in LIKE patterns, IN lists, subqueries) took seconds to forever on 300-byte texts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";

let server: RunningServer;

beforeAll(async () => {
  const dir = tempDir();
  createTypesDatabase(join(dir, "types.sqlite"));
  server = await startServer(typesConfig(dir, { limits: { max_query_bytes: 12_000 } }), { workers: 1 });
  // The first validation waits for the validation workers to start.
  expect((await fetch(queryUrl("SELECT id FROM kinds LIMIT 1"))).status).toBe(200);
});
afterAll(() => server.stop());

const queryUrl = (sql: string) => `${server.url}/api/query?query=${encodeURIComponent(sql)}`;
const W = "SELECT id FROM kinds WHERE ";
const nest = (open: string, inner: string, close: string, n: number) => W + open.repeat(n) + inner + close.repeat(n);
const list = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join(", ");

/** [what, query, the 400's message must contain]. */
const CORPUS: [string, string, string][] = [
  // Unbalanced and balanced nesting (the shape: 20 deep took 2.2 s, 100 deep never returned).
  ["unbalanced nesting 20 deep", W + "(".repeat(20) + "(id = 1))))))AND" + ")".repeat(20), "Unbalanced parentheses"],
  ["unbalanced nesting 100 deep", W + "(".repeat(100) + "(id = 1))))))AND" + ")".repeat(100), "Unbalanced parentheses"],
  ["unclosed nesting 22 deep", W + "(".repeat(22) + "id = 1", "is never closed"],
  ["balanced nesting 22 deep around an error", nest("(", "id = 1 AND", ")", 22), "remove redundant parentheses"],
  ["balanced nesting 60 deep", nest("(", "id = 1", ")", 60), "remove redundant parentheses"],
  ["4,000 '('", W + "(".repeat(4000), "Unbalanced parentheses"],
  ["4,000 balanced parentheses", nest("(", "1", ")", 2000), "nested deeper than 64 levels"],
  ["spaces and comments between '('", nest("( /**/ ", "id =", ")", 30), "remove redundant parentheses"],
  // Nested function calls (linear for the parser: they reach it, and are refused there or before).
  ["nested calls 63 deep around an error", nest("abs(", "id =", ")", 63), "SQL syntax error"],
  ["nested calls 200 deep", nest("abs(", "id", ")", 200), "nested deeper than 64 levels"],
  ["nested CASTs 70 deep", nest("CAST(", "id", " AS INTEGER)", 70) + " > 0", "nested deeper than 64 levels"],
  // Long operator chains, NOT chains, lists.
  ["a 700-term OR chain", W + Array.from({ length: 700 }, (_, i) => `id=${i}`).join(" OR "), "nested deeper than 64 levels"],
  ["a 1,200-term || chain", W + Array(1200).fill("'a'").join("||") + " = ''", "nested deeper than 64 levels"],
  ["2,000 NOTs", W + "NOT ".repeat(2000) + "id", "nested deeper than 64 levels"],
  ["3,000 minus signs", W + "- ".repeat(3000) + "id > 0", "nested deeper than 64 levels"],
  ["a 1,001-item IN list", W + `id IN (${list(1001, (i) => String(i))})`, "IN list has 1001 items"],
  ["a 1,000-item IN list ending in an error", W + `id IN (${list(1000, (i) => String(i))},)`, "SQL syntax error"],
  ["1,600 list items", W + `coalesce(${list(1600, () => "id")}) > 0`, "the limit is 1500"],
  ["IN lists nested 12 deep", nest("id IN (", "1", ")", 12), "IN lists take literal values only"],
  // LIKE patterns (read twice by the parser, even when they parse) and other mutated nests.
  ["LIKE in LIKE patterns 16 deep", nest("label LIKE (", "'a'", ")", 16), "LIKE inside a LIKE pattern"],
  ["LIKE in LIKE patterns through calls", nest("label NOT LIKE lower(", "'a'", ")", 16), "LIKE inside a LIKE pattern"],
  ["many LIKE nests side by side", W + Array(60).fill("label LIKE lower(label LIKE lower(label LIKE lower(label LIKE lower(label LIKE lower(label LIKE lower('a'))))))").join(" AND "), "too complex to validate"],
  ["mixed nest: '((', LIKE and IN", nest("((label LIKE abs(id IN (1) AND ", "id =", ")))", 8), "too complex to validate"],
  ["mixed nest: subqueries and LIKE", nest("label LIKE ((SELECT ", "id =", "))", 8), "too complex to validate"],
  ["nested CTEs", "WITH a AS (".repeat(10) + "SELECT 1" + ") SELECT 1".repeat(10), "WITH (common table expressions)"],
  ["nested subqueries 10 deep", nest("id = (SELECT ", "1", ")", 10), "each nested subquery"],
  // Grammar the parser accepts and SQLite does not.
  ["LIMIT three times", "SELECT label FROM kinds LIMIT 31 LIMIT 31 LIMIT 31", "LIMIT appears more than once"],
  ["three FROMs", "SELECT score FROM kinds x FROM items y FROM cheap_items LIMIT 3", "FROM appears more than once"],
  ["WHERE after LIMIT", "SELECT id FROM kinds LIMIT 1 WHERE id = 1", "WHERE must come before LIMIT"],
  // Strings the WHERE clause would build (1.8 GB in SQLite).
  [
    "nested replace() of 900 MB",
    W + `length(replace(replace(replace('x','x','${"x".repeat(1000)}'),'x','${"x".repeat(1000)}'),'x','${"x".repeat(900)}')) > 0`,
    "can build a string of 900,000,000 bytes",
  ],
  // Text that cannot be tokenised, and size.
  ["an unterminated string full of '('", W + "label = '" + "(".repeat(3000), "Unterminated string literal"],
  ["an unterminated comment", W + "id = 1 /* " + "(".repeat(3000), "Unterminated comment"],
  ["a '#' comment", "SELECT #x\n id FROM kinds", "'#' comments are not supported"],
  ["over max_query_bytes", W + `label = '${"x".repeat(12_500)}'`, "(max_query_bytes) is 12000 bytes"],
];

test("the corpus fits in a request head under Bun's default 16 KiB limit (no 431 in the way)", () => {
  for (const [, sql] of CORPUS) expect(queryUrl(sql).length).toBeLessThan(16_000);
});

test.each(CORPUS)("%s: 400 quickly, while GET /api/ keeps answering", async (_, sql, message) => {
  let done = false;
  const discovery: number[] = [];
  const poll = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${server.url}/api/`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      discovery.push(performance.now() - started);
      await Bun.sleep(5);
    }
  })();
  const started = performance.now();
  const res = await fetch(queryUrl(sql));
  const body = await res.text();
  const elapsed = performance.now() - started;
  done = true;
  await poll;
  expect(res.status).toBe(400);
  expect(body).toContain(message);
  expect(body).not.toContain("\n");
  // Each takes milliseconds; the bounds leave room for a busy machine.
  expect(elapsed).toBeLessThan(2000);
  expect(Math.max(0, ...discovery)).toBeLessThan(500);
});

test("the server still validates and answers ordinary queries afterwards", async () => {
  const res = await fetch(queryUrl("SELECT id, label FROM kinds WHERE label LIKE 'a%' OR id IN (2, 3) ORDER BY id"));
  expect(res.status).toBe(200);
});
