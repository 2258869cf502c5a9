/**
 * A minimal ERC-1271 smart wallet installed on the devnet (anvil_setCode), for signatures that only
 * the chain can check: it accepts a 66-byte signature, its owner's ECDSA signature of the hash
 * followed by one byte (so it is never taken for an EOA's 65-byte signature).
 */
import { createRequire } from "node:module";
import { createPublicClient, http, pad, type Hex } from "viem";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract TestWallet {
    address public owner; // slot 0, set with anvil_setStorageAt
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 66) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}`;

let runtime: Hex | undefined;

function compiledRuntime(): Hex {
  if (runtime !== undefined) return runtime;
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "TestWallet.sol": { content: SOURCE } },
        settings: { evmVersion: "cancun", outputSelection: { "*": { "*": ["evm.deployedBytecode.object"] } } },
      }),
    ),
  );
  const object = output.contracts?.["TestWallet.sol"]?.TestWallet?.evm?.deployedBytecode?.object;
  if (typeof object !== "string") throw new Error(`solc failed: ${JSON.stringify(output.errors)}`);
  runtime = `0x${object}`;
  return runtime;
}

export interface SmartWallet {
  address: Hex;
  /** The wallet's signature of an EIP-712 digest: its owner's 65 bytes and one more. */
  sign(digest: Hex): Promise<Hex>;
}

/** Installs a new wallet at a fresh address, owned by a fresh key. */
export async function installSmartWallet(rpcUrl: string): Promise<SmartWallet> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const address = privateKeyToAccount(generatePrivateKey()).address;
  const client = createPublicClient({ transport: http(rpcUrl) });
  await client.request({ method: "anvil_setCode" as never, params: [address, compiledRuntime()] as never });
  await client.request({ method: "anvil_setStorageAt" as never, params: [address, pad("0x0"), pad(owner.address)] as never });
  return {
    address,
    sign: async (digest) => `${await owner.sign({ hash: digest })}00` as Hex,
  };
}
