/**
 * A smart wallet's signature (not 65 bytes: ERC-1271 from a deployed wallet, ERC-6492 from one not
 * deployed yet) cannot be recovered locally: only the chain can tell whether it is valid. Sending
 * every such signature to the facilitator's /verify would let anyone spend its quota, one forged
 * header per call, so it is checked first with one `eth_call` to the chain's `rpc_urls` endpoint:
 * the ERC-6492 universal validator, run deployless (its creation code is the call's data; nothing
 * is deployed or sent), which answers for both forms as viem's `verifyHash` does. The facilitator
 * checks it again at /verify.
 */
import {
  BaseError,
  encodeDeployData,
  erc6492SignatureValidatorAbi,
  erc6492SignatureValidatorByteCode,
  ExecutionRevertedError,
  RpcRequestError,
  type Hex,
  type PublicClient,
} from "viem";

/** JSON-RPC error code of a call that reverted (EIP-1474 as nodes use it: "execution reverted"). */
const EXECUTION_REVERTED = 3;

/**
 * Whether `signature` is `address`'s over `digest`: true, false (the validator said no or
 * reverted), or null when the endpoint did not answer (the facilitator then decides).
 */
export async function walletSignatureValid(client: PublicClient, address: Hex, digest: Hex, signature: Hex): Promise<boolean | null> {
  try {
    const { data } = await client.call({
      data: encodeDeployData({ abi: erc6492SignatureValidatorAbi, args: [address, digest, signature], bytecode: erc6492SignatureValidatorByteCode }),
    });
    // The validator's creation code returns one byte: 0x01 for a valid signature.
    return data !== undefined && BigInt(data) === 1n;
  } catch (error) {
    return reverted(error) ? false : null;
  }
}

/** Whether the call reached the chain and reverted (an invalid signature), not an endpoint failure. */
function reverted(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return error.walk((cause) => cause instanceof ExecutionRevertedError || (cause instanceof RpcRequestError && cause.code === EXECUTION_REVERTED)) !== null;
}
