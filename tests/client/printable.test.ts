/**
 * Text from the network on the buyer's terminal (src/client/printable.ts, DESIGN §17): every
 * control character, and the bidirectional marks and overrides, shown as a visible escape; JSON
 * keeps its values by escaping them its own way.
 */
import { describe, expect, test } from "bun:test";
import { printable, printableJson, printableText, quoted } from "../../src/client/printable.ts";

describe("printable", () => {
  test.each([
    ["CSI erase line", "\x1b[1A\x1b[2KPaid", "\\u{1b}[1A\\u{1b}[2KPaid"],
    ["OSC 52 clipboard", "\x1b]52;c;cHduZWQ=\x07", "\\u{1b}]52;c;cHduZWQ=\\u{7}"],
    ["DCS … ST", "\x1bP+q544e\x1b\\", "\\u{1b}P+q544e\\u{1b}\\"],
    ["C1 CSI", "\u009b2J", "\\u{9b}2J"],
    ["C1 OSC", "\u009d0;title\u009c", "\\u{9d}0;title\\u{9c}"],
    ["carriage return", "a\rb", "a\\u{d}b"],
    ["tab and line feed", "a\tb\nc", "a\\u{9}b\\u{a}c"],
    ["DEL and backspace", "a\x7f\x08", "a\\u{7f}\\u{8}"],
    ["right-to-left override", "\u202eDSU", "\\u{202e}DSU"],
    ["isolates and marks", "\u2066x\u2069\u200f\u061c", "\\u{2066}x\\u{2069}\\u{200f}\\u{61c}"],
    ["line separator", "a\u2028b", "a\\u{2028}b"],
    ["plain text, accents and symbols", "béta ✓ — 0.05 USDC", "béta ✓ — 0.05 USDC"],
  ])("%s", (_name, text, shown) => {
    expect(printable(text)).toBe(shown);
  });

  test("printableText keeps tabs and line feeds, and nothing else", () => {
    expect(printableText("a\tb\nc\r\x1b[2K\u009b\u202e")).toBe("a\tb\nc\\u{d}\\u{1b}[2K\\u{9b}\\u{202e}");
  });

  test("printableJson escapes what JSON.stringify leaves raw, and the values read back the same", () => {
    const value = { "k\x1b": "\x1b]52;c;x\x07 \u009b2J \u202eabc \u2028 \x7f" };
    const json = printableJson(JSON.stringify(value));
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202a-\u202e]/);
    expect(json).toContain("\\u009b2J");
    expect(json).toContain("\\u202eabc");
    expect(JSON.parse(json)).toEqual(value);
  });

  test("quoted cuts and escapes a short name", () => {
    expect(quoted("US\x1b[2KDC")).toBe('"US\\u{1b}[2KDC"');
    expect(quoted("x".repeat(50), 3)).toBe('"xxx…"');
  });
});
