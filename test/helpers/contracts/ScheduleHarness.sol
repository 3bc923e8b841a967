// SPDX-License-Identifier: MIT
pragma solidity ^0.8.15;

// flashlog's own harness for base/contracts `src/L1/ProtocolVersions.sol` @4f7acda5's schedule
// commitment, written from its description (not copied): link[0] = 0,
// link[i+1] = keccak256(abi.encode(link[i], i, timestamp_i)) over uint256 i and the uint64
// timestamp, and activatedScheduleId(t) = the link after the highest id whose timestamp is
// non-zero and <= t. The registry's storage and access rules are left out.
contract ScheduleHarness {
    function activatedScheduleId(uint64[] calldata timestamps, uint64 l2Timestamp) external pure returns (bytes32 link) {
        uint256 active = 0;
        for (uint256 i = timestamps.length; i > 0; i--) {
            if (timestamps[i - 1] != 0 && timestamps[i - 1] <= l2Timestamp) {
                active = i;
                break;
            }
        }
        for (uint256 i = 0; i < active; i++) link = keccak256(abi.encode(link, i, timestamps[i]));
    }
}
