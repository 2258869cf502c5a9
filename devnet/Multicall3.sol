// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Multicall3 (subset) for the local paid sandbox.
/// @notice Public chains have Multicall3 at 0xcA11bde05977b3631167028862bE2a173976CA11; a fresh
/// anvil chain does not. The x402 `exact` EVM facilitator batches its diagnostic reads (balance,
/// name, version, authorizationState) through `tryAggregate` after a failed simulation, so the
/// sandbox installs this runtime code at the canonical address to get the same precise
/// `invalidReason` values (e.g. insufficient balance) as on a real network.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls)
        external
        payable
        returns (Result[] memory returnData)
    {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) {
                require(success, "Multicall3: call failed");
            }
            returnData[i] = Result(success, ret);
        }
    }
}
