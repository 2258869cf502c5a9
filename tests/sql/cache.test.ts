import { afterAll, beforeAll, expect, test } from "bun:test";
import { BadRequestError } from "../../src/errors.ts";
import { cachedValidator } from "../../src/sql/cache.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { makeFixture, type Fixture } from "./fixture.ts";

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => fixture.close());

test("a cached validation is the same as a fresh one, and is reused", () => {
  const validate = cachedValidator(fixture.catalog, { maxQueryBytes: 16384 });
  const sql = "SELECT id, note FROM swaps WHERE id > 2 ORDER BY id LIMIT 5";
  const first = validate(sql);
  expect(first).toEqual(validateQuery(sql, fixture.catalog, { maxQueryBytes: 16384 }));
  expect(validate(sql)).toBe(first);
});

test("rejections are still rejected every time", () => {
  const validate = cachedValidator(fixture.catalog, { maxQueryBytes: 16384 });
  for (let i = 0; i < 2; i++) expect(() => validate("SELECT count(*) FROM swaps")).toThrow(BadRequestError);
});

test("the cache is bounded: the least recently used entry goes first", () => {
  const validate = cachedValidator(fixture.catalog, { maxQueryBytes: 16384 }, 2);
  const a = validate("SELECT id FROM swaps LIMIT 1");
  validate("SELECT id FROM swaps LIMIT 2");
  validate("SELECT id FROM swaps LIMIT 1"); // a is now the most recent
  validate("SELECT id FROM swaps LIMIT 3"); // evicts LIMIT 2
  expect(validate("SELECT id FROM swaps LIMIT 1")).toBe(a);
  const b = validate("SELECT id FROM swaps LIMIT 2");
  expect(validate("SELECT id FROM swaps LIMIT 2")).toBe(b);
});
