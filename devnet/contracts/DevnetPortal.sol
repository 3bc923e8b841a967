// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// The deposit path of `flashlog devnet --op-geth` (and of the derived test chain,
/// test/helpers/derived-chain.ts) on its L1: the
/// OptimismPortal's deposit event, written from the OP spec (`specs/protocol/deposits.md`,
/// "Deposit Contract"), without the portal's proofs, withdrawals or resource metering.
///
///   event TransactionDeposited(address indexed from, address indexed to, uint256 indexed version, bytes opaqueData)
///
/// version 0's opaqueData is `abi.encodePacked(mint, value, gasLimit, isCreation, data)`, the mint
/// being the ETH sent along. A contract caller's address is aliased (+0x1111…1111), as the portal does.
contract DevnetPortal {
    uint256 internal constant DEPOSIT_VERSION = 0;
    uint160 internal constant ALIAS_OFFSET = uint160(0x1111000000000000000000000000000000001111);

    event TransactionDeposited(address indexed from, address indexed to, uint256 indexed version, bytes opaqueData);

    function depositTransaction(address to, uint256 value, uint64 gasLimit, bool isCreation, bytes memory data) external payable {
        require(!isCreation || to == address(0), "DevnetPortal: a creation has no recipient");
        address from = msg.sender;
        if (msg.sender != tx.origin) {
            unchecked {
                from = address(uint160(msg.sender) + ALIAS_OFFSET);
            }
        }
        emit TransactionDeposited(from, to, DEPOSIT_VERSION, abi.encodePacked(msg.value, value, gasLimit, isCreation, data));
    }
}
