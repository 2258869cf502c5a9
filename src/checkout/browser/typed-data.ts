/**
 * EIP-712 typed data as a wallet's `eth_signTypedData_v4` takes it (ARCHITECTURE.md §15): one JSON
 * string with `EIP712Domain` declared from the domain's fields and big integers as decimal strings,
 * as viem's wallet client sends it. x402's exact scheme hands the signer viem-style typed data
 * (bigints, no EIP712Domain).
 */

/** The EIP-712 domain's fields in the order EIP-712 defines (and viem writes them). */
const DOMAIN_FIELDS: readonly [string, string][] = [
  ["name", "string"],
  ["version", "string"],
  ["chainId", "uint256"],
  ["verifyingContract", "address"],
  ["salt", "bytes32"],
];

/** The typed data as `eth_signTypedData_v4` takes it: EIP712Domain declared, big integers as decimal strings. */
export function typedDataJson(data: { domain: Record<string, unknown>; types: Record<string, unknown>; primaryType: string; message: Record<string, unknown> }): string {
  const domainType = DOMAIN_FIELDS.filter(([name]) => data.domain[name] !== undefined).map(([name, type]) => ({ name, type }));
  const typed = { types: { EIP712Domain: domainType, ...data.types }, primaryType: data.primaryType, domain: data.domain, message: data.message };
  return JSON.stringify(typed, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
}
