import { expect, test } from "bun:test";
import { LruCache } from "../../src/sql/cache.ts";

test("a cached value is returned as stored", () => {
  const cache = new LruCache<string, { n: number }>(4);
  const value = { n: 1 };
  cache.set("a", value);
  expect(cache.get("a")).toBe(value);
  expect(cache.get("b")).toBeUndefined();
});

test("the cache is bounded: the least recently used entry goes first", () => {
  const cache = new LruCache<string, number>(2);
  cache.set("a", 1);
  cache.set("b", 2);
  expect(cache.get("a")).toBe(1); // a is now the most recent
  cache.set("c", 3); // evicts b
  expect(cache.get("b")).toBeUndefined();
  expect(cache.get("a")).toBe(1);
  expect(cache.get("c")).toBe(3);
  expect(cache.size).toBe(2);
});

test("setting an existing key replaces it without growing the cache", () => {
  const cache = new LruCache<string, number>(2);
  cache.set("a", 1);
  cache.set("a", 2);
  expect(cache.get("a")).toBe(2);
  expect(cache.size).toBe(1);
});
