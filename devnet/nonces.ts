/**
 * A nonce manager of its own for each sandbox account. viem's shared `nonceManager` remembers
 * the last nonce per address and chain id; every sandbox has chain id 31337 and the same dev
 * accounts, so a second sandbox in the same process would inherit the first one's nonces and
 * its transactions would wait forever for the missing ones.
 */
import { createNonceManager, type NonceManager } from "viem";
import { getTransactionCount } from "viem/actions";

export function freshNonceManager(): NonceManager {
  return createNonceManager({
    source: {
      get: ({ address, client }) => getTransactionCount(client, { address, blockTag: "pending" }),
      set: () => {},
    },
  });
}
