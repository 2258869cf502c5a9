/**
 * A smart wallet's signature (not 65 bytes: ERC-1271 from a deployed wallet, ERC-6492 from one not
 * deployed yet) cannot be recovered locally: only the chain can tell whether it is valid. Sending
 * every such signature to the facilitator's /verify would let anyone spend its quota, one forged
 * header per call, so it is checked first with one `eth_call` to the chain's `rpc_urls` endpoint:
 * the ERC-6492 universal validator, run deployless (its creation code is the call's data; nothing
 * is deployed or sent), which answers for both forms as viem's `verifyHash` does. The facilitator
 * checks it again at /verify. When the endpoint does not answer, the payment is refused with 503
 * rather than sent to the facilitator unchecked: otherwise an attacker who gets the endpoint to
 * rate-limit the server would make every forged signature a /verify call again.
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
 * What the chain says of a smart wallet's signature: `invalid` when the validator said no or
 * reverted; `unanswered` when the endpoint failed; `no-endpoint` when the chain has none in
 * `rpc_urls` (the facilitator then decides, as nothing else can).
 */
export type WalletVerdict = "valid" | "invalid" | "unanswered" | "no-endpoint";

export async function walletSignatureValid(client: PublicClient, address: Hex, digest: Hex, signature: Hex): Promise<WalletVerdict> {
  try {
    const { data } = await client.call({
      data: encodeDeployData({ abi: erc6492SignatureValidatorAbi, args: [address, digest, signature], bytecode: erc6492SignatureValidatorByteCode }),
    });
    // The validator's creation code returns one byte: 0x01 for a valid signature.
    return data !== undefined && BigInt(data) === 1n ? "valid" : "invalid";
  } catch (error) {
    return reverted(error) ? "invalid" : "unanswered";
  }
}

/** Whether the call reached the chain and reverted (an invalid signature), not an endpoint failure. */
function reverted(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return error.walk((cause) => cause instanceof ExecutionRevertedError || (cause instanceof RpcRequestError && cause.code === EXECUTION_REVERTED)) !== null;
}
