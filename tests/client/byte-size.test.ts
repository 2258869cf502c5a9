/** `--max-bytes` (src/client/byte-size.ts): sizes as written on a command line, and as messages show them. */
import { expect, test } from "bun:test";
import { DEFAULT_MAX_BYTES, describeBytes, parseByteSize } from "../../src/client/byte-size.ts";

test.each([
  ["1073741824", 1073741824],
  ["500MB", 500_000_000],
  ["500 mb", 500_000_000],
  ["2GiB", 2 * 1024 ** 3],
  ["1.5KiB", 1536],
  ["64kb", 64_000],
  ["10B", 10],
  ["1TiB", 1024 ** 4],
])("%p is %p bytes", (text, bytes) => {
  expect(parseByteSize(text)).toBe(bytes);
});

test.each(["", "lots", "-1", "0", "0.1", "1e9", "5M", "5 GB extra", "1e400GB"])("%p is not a size", (text) => {
  expect(parseByteSize(text)).toBeNull();
});

test.each([
  [DEFAULT_MAX_BYTES, "1 GiB (1073741824 bytes)"],
  [64 * 1024 ** 2, "64 MiB (67108864 bytes)"],
  [100_000_000, "100 MB (100000000 bytes)"],
  [1000, "1 kB (1000 bytes)"],
  [1234, "1234 bytes"],
])("%p is described as %p", (bytes, text) => {
  expect(describeBytes(bytes)).toBe(text);
});
