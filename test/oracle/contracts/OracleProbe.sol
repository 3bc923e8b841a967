// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// A contract for the op-geth oracle chain's transactions: storage writes and deletions, a log, a
/// revert. Deployed by a user transaction and by a deposit; an EIP-7702 account delegates to it.
contract OracleProbe {
    uint256 public count;
    mapping(address => uint256) public stored;

    event Stored(address indexed from, uint256 value);

    function store(uint256 value) external payable {
        stored[msg.sender] = value;
        count += 1;
        emit Stored(msg.sender, value);
    }

    function clear() external {
        delete stored[msg.sender];
    }

    function fail() external pure {
        revert("OracleProbe: fail");
    }
}
