/**
 * EVM addresses in the config (ARCHITECTURE.md §2): checked with viem, returned checksummed. Mixed-case
 * input must carry a valid EIP-55 checksum (a wrong one usually means a typo); all-lowercase input
 * is accepted and checksummed here.
 */
import { getAddress, isAddress, zeroAddress } from "viem";
import type { Hex } from "./types.ts";
import type { ConfigPath, Problems } from "./problems.ts";

export function checkAddress(text: string, path: ConfigPath, problems: Problems, options: { allowZero: boolean }): Hex | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) {
    problems.add(path, `${JSON.stringify(text)} is not an address; write 0x followed by 40 hex digits, in quotes`);
    return undefined;
  }
  if (!isAddress(text, { strict: true })) {
    problems.add(path, `${JSON.stringify(text)} has a wrong EIP-55 checksum (mixed case); check it for a typo, or write it all in lowercase`);
    return undefined;
  }
  const address = getAddress(text);
  if (!options.allowZero && address === zeroAddress) {
    problems.add(path, "the zero address cannot receive payments; write the address that should be paid");
    return undefined;
  }
  return address;
}
