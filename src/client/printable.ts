/**
 * Text from the network on the buyer's terminal. A server (or a token contract) can send control
 * characters: an escape sequence that moves the cursor or clears a line could erase a warning or
 * rewrite the price printed above it. Every human-readable line the client prints passes here.
 */

/** C0 and C1 controls (including ESC and CR), and the bidirectional overrides that reorder text. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The line with every unsafe character written as a visible `\u{…}` escape. */
export function printable(line: string): string {
  return line.replace(UNSAFE, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}

/** A short string from the network, quoted for a message: `"USDC"`; cut at `max` characters. */
export function quoted(text: string, max = 40): string {
  const chars = [...text];
  const cut = chars.length > max ? `${chars.slice(0, max).join("")}…` : text;
  return `"${printable(cut)}"`;
}
