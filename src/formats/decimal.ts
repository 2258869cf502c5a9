/**
 * The exact text of an Arrow Decimal value (Decimal128 and its narrower and wider kin): the unscaled
 * integer with the column's scale, every fractional digit kept (`12345.6700` for 123456700 at scale
 * 4), so that a reader sees the value and the column's precision as the database holds them. A
 * negative scale multiplies by a power of ten (123 at scale -2 is `12300`).
 *
 * In JSON a decimal is always this text as a string (DESIGN §16): a JSON number would be read as a
 * double by ordinary parsers, which holds neither 0.1 nor a 38-digit HUGEINT exactly.
 */
import type { Decimal, Vector } from "apache-arrow";

export function decimalText(unscaled: bigint, scale: number): string {
  if (scale <= 0) return unscaled === 0n ? "0" : unscaled.toString() + "0".repeat(-scale);
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, "0");
  return `${negative ? "-" : ""}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/**
 * The unscaled value of a Decimal column's cell (one Data chunk): `bitWidth / 32` little-endian
 * 32-bit words, two's complement. apache-arrow's own `get` gives the words, not a number. A sliced
 * chunk (a List's elements) has its values sliced too: `data.offset` counts only in its bitmap.
 */
export function unscaledAt(vector: Vector<Decimal>, index: number): bigint {
  const data = vector.data[0]!;
  const words = data.type.bitWidth / 32;
  const values = data.values as unknown as Uint32Array;
  const at = index * words;
  let unscaled = 0n;
  for (let w = words - 1; w >= 0; w--) unscaled = (unscaled << 32n) | BigInt(values[at + w]!);
  return BigInt.asIntN(data.type.bitWidth, unscaled);
}
