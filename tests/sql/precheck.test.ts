/**
 * The linear checks before the parser (src/sql/precheck.ts): what they refuse and why, what they
 * let through, that they take little time on any 16 KB text, and that whatever they let through
 * parses well within the validation deadline (sql-parser-cst backtracks: some short texts would
 * otherwise take it minutes).
 */
import { describe, expect, test } from "bun:test";
import { parse } from "sql-parser-cst";
import { BadRequestError } from "../../src/errors.ts";
import { LIMITS } from "../../src/sql/allowlist.ts";
import { precheckQuery } from "../../src/sql/precheck.ts";
import { mulberry32 as random } from "../support/random.ts";

const W = "SELECT id FROM swaps WHERE ";
const nest = (open: string, inner: string, close: string, n: number) => W + open.repeat(n) + inner + close.repeat(n);
const like = (n: number) => nest("pair LIKE lower(", "'a'", ")", n);

function refusal(sql: string, maxQueryBytes = 16384): string {
  try {
    precheckQuery(sql, maxQueryBytes);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as Error).message;
  }
  throw new Error(`passed: ${sql.slice(0, 80)}`);
}

/** [what, text, the message must contain]. */
const REFUSED: [string, string, string][] = [
  ["over max_query_bytes", W + `pair = '${"x".repeat(20_000)}'`, "the server's limit (max_query_bytes) is 16384 bytes"],
  ["NUL", W + "id = 1\0", "NUL character"],
  ["'#' comment", "SELECT #x\n id FROM swaps", "'#' comments are not supported"],
  ["unterminated string", W + "pair = 'x", "Unterminated string literal starting at character 35"],
  ["unterminated identifier", W + '"pair = 1', "Unterminated quoted identifier"],
  ["unterminated comment", W + "id = 1 /*", "Unterminated comment"],
  ["')' closing nothing", W + "id = 1)) OR (1", "the ')' at character 34 closes nothing"],
  ["'(' never closed", W + "((id = 1)", "the '(' at character 28 is never closed"],
  ["the issue's unbalanced nest", W + "(".repeat(30) + "(id = 1))))))AND" + ")".repeat(30), "closes nothing"],
  ["100 unbalanced '('", W + "(".repeat(100) + "id = 1", "is never closed"],
  ["65 parentheses deep", nest("abs(", "id", ")", 65), "nested deeper than 64 levels"],
  ["'(' inside an IN list", W + "id IN ((1), 2)", "IN lists take literal values only, without parentheses"],
  ["IN lists nested in IN lists", nest("id IN (", "1", ")", 12), "IN lists take literal values only"],
  ["a CTE", "WITH s AS (SELECT * FROM swaps) SELECT id FROM s", "WITH (common table expressions) is not supported"],
  ["nested CTEs", "WITH a AS (".repeat(8) + "SELECT 1" + ") SELECT 1".repeat(8), "WITH (common table expressions)"],
  ["too many commas", W + `coalesce(${Array(1600).fill("id").join(", ")}) > 0`, "the limit is 1500"],
  ["'((' 14 deep around an error", nest("(", "id = 1 AND", ")", 14), "too complex to validate: the parser's work multiplies with each nested '((' (a parenthesis directly inside another)"],
  ["'((' 40 deep", nest("(", "id = 1", ")", 40), "remove redundant parentheses"],
  ["'( (' with spaces and comments", nest("( /* */ ", "id =", ")", 20), "remove redundant parentheses"],
  ["LIKE in LIKE patterns, 14 deep", nest("pair LIKE (", "'a'", ")", 14), "each nested LIKE inside a LIKE pattern"],
  ["LIKE in LIKE patterns through calls", like(16), "compare with LIKE at one level only"],
  ["NOT LIKE nests", nest("pair NOT LIKE abs(", "'a'", ")", 16), "LIKE inside a LIKE pattern"],
  ["each nested subquery", nest("id = (SELECT ", "1", ")", 10), "each nested subquery"],
  ["subqueries in LIKE patterns", nest("pair LIKE (SELECT ", "1", ")", 8), "query a single table without subqueries"],
  ["many LIKE nests side by side", W + Array(60).fill(like(6).slice(W.length)).join(" AND "), "too complex to validate"],
];

/** Texts that must reach the parser: the grammar's own shapes at their limits. */
const PASSED: [string, string][] = [
  ["a plain query", "SELECT id, pair FROM swaps WHERE price > 1 AND pair LIKE 'ETH%' ORDER BY id LIMIT 10"],
  ["parentheses in quotes and comments", W + "pair = '((((((((((((((((((((' /* )))))))))))))))))) */ -- ((((((\n"],
  ["a 1000-item IN list", W + `id IN (${Array.from({ length: 1000 }, (_, i) => i).join(", ")})`],
  ["1000 string items", W + `pair IN (${Array.from({ length: 1000 }, (_, i) => `'p${i}'`).join(", ")})`],
  ["64 nested calls", nest("abs(", "id", ")", 63)],
  ["NOT ( 32 deep", nest("NOT (", "id", ")", 32)],
  ["a 1500-term OR chain", W + Array.from({ length: 1500 }, (_, i) => `id=${i}`).join(" OR ")],
  ["500 LIKEs side by side", W + Array.from({ length: 500 }, (_, i) => `pair LIKE '%${i}%'`).join(" OR ")],
  ["LIKE with a computed pattern", W + "lower(pair) LIKE lower('%' || note || '%') AND (pair LIKE 'a%' OR pair NOT LIKE 'b%')"],
  ["'((' 8 deep", nest("(", "id = 1", ")", 8)],
  ["one subquery (refused later, by name)", W + "id IN (SELECT id FROM swaps)"],
];

describe("refused before parsing", () => {
  test.each(REFUSED)("%s", (_, sql, message) => {
    expect(refusal(sql)).toContain(message);
  });

  test("the checks are linear: 16 KB of the worst shapes take milliseconds", () => {
    const texts = [
      W + "(".repeat(16_000),
      W + "(".repeat(60) + "x".repeat(16_000),
      W + "pair LIKE (".repeat(60) + "'a'" + ")".repeat(60) + " OR id = 1".repeat(1500),
      W + "id IN (" + "1, ".repeat(1400) + "'" + "x".repeat(10_000) + "')",
      W + "'a' || ".repeat(2300) + "'a'",
    ];
    for (const sql of texts) {
      const started = performance.now();
      try {
        precheckQuery(sql, 16384);
      } catch {}
      expect(performance.now() - started).toBeLessThan(100);
    }
  });
});

describe("passed to the parser", () => {
  test.each(PASSED)("%s", (_, sql) => {
    expect(() => precheckQuery(sql, 16384)).not.toThrow();
  });
});


/** Wrappers that nest, among them every construct the parser reads more than once. */
const WRAPPERS: [string, string][] = [
  ["(", ")"], ["abs(", ")"], ["id LIKE (", ")"], ["id LIKE ", ""], ["id NOT LIKE abs(", ")"], ["id IN (1) AND ", ""],
  ["NOT ", ""], ["id = ", ""], ["CAST(", " AS INT)"], ["coalesce(id, ", ")"], ["(SELECT ", ")"], ["(1, ", ")"],
  ["substr(id, ", ")"], ["EXISTS (", ")"], ["( /* c */ ", ")"], ["CASE WHEN ", " THEN 1 END"], ["id BETWEEN ", " AND 1"],
  ["", " COLLATE x"], ["-(", ")"], ["(VALUES (", "))"], ["(", ").x"], ["id IS (", ")"], ["replace(id, 'a', ", ")"],
];
const INNERS = ["id", "id =", "", "id id", "1,", "'x'", "id LIKE"];
const PREFIXES = [W, "SELECT ", "SELECT id FROM swaps ORDER BY ", "SELECT id FROM ", "SELECT id FROM swaps LIMIT "];

test("whatever the checks let through parses well within the validation deadline (2,000 generated nests)", () => {
  const next = random(402);
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]!;
  let passed = 0;
  let slowest = 0;
  for (let i = 0; i < 2000; i++) {
    let open = "";
    let close = "";
    for (let depth = 2 + Math.floor(next() * 24); depth > 0; depth--) {
      const [o, c] = pick(WRAPPERS);
      open += o;
      close = c + close;
    }
    const sql = pick(PREFIXES) + open + pick(INNERS) + close;
    try {
      precheckQuery(sql, 16384);
    } catch {
      continue;
    }
    passed++;
    const started = performance.now();
    try {
      parse(sql, { dialect: "sqlite", includeRange: true, includeComments: true, paramTypes: ["?", "?nr", ":name", "@name", "$name"] });
    } catch {}
    slowest = Math.max(slowest, performance.now() - started);
  }
  // Measured: about 70 ms at worst; the deadline is 1,000 ms.
  expect(slowest).toBeLessThan(LIMITS.validationTimeoutMs);
  // The corpus is not vacuous: many nests reach the parser.
  expect(passed).toBeGreaterThan(500);
}, 120_000);
