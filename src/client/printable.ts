/**
 * Text from the network on the buyer's terminal (DESIGN §17: the buyer CLI trusts no server
 * bytes). A server (or a token contract) can send control characters: an escape sequence (CSI,
 * OSC, DCS, introduced by ESC or by its one-character C1 form) that moves the cursor or clears a
 * line could erase a warning or the "Paid …" receipt, rewrite the price printed above it, or set
 * the clipboard (OSC 52). Every line the client prints passes `printable`; data it renders for
 * stdout passes `printableText` (CSV) or `printableJson` (JSON, NDJSON). The character that
 * starts a sequence is written as a visible escape, so the rest of it is inert text.
 */

/** C0 and C1 controls (ESC, CR, BS…, DEL), line separators, and the bidirectional marks and overrides that reorder text. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same, keeping the tab and the line feed, which a multi-line value may hold (a quoted CSV field). */
const UNSAFE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** What JSON.stringify leaves raw of the above (it escapes U+0000–U+001F itself). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const visible = (char: string) => `\\u{${char.codePointAt(0)!.toString(16)}}`;

/** The line with every unsafe character written as a visible `\u{…}` escape: `\u{1b}[2K`. */
export function printable(line: string): string {
  return line.replace(UNSAFE, visible);
}

/** Like `printable`, for a value that may span lines: tabs and line feeds are kept. */
export function printableText(text: string): string {
  return text.replace(UNSAFE_IN_TEXT, visible);
}

/**
 * JSON text whose strings hold no raw unsafe character: each is written as its `\uXXXX` JSON
 * escape, which any reader decodes to the same value. These characters can only occur inside
 * strings, so the text is rewritten whole.
 */
export function printableJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A short string from the network, quoted for a message: `"USDC"`; cut at `max` characters. */
export function quoted(text: string, max = 40): string {
  const chars = [...text];
  const cut = chars.length > max ? `${chars.slice(0, max).join("")}…` : text;
  return `"${printable(cut)}"`;
}
