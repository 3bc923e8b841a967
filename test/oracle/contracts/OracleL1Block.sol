// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// The L1Block predeploy (0x4200000000000000000000000000000000000015) of the op-geth oracle chain,
/// written from the OP spec (`isthmus/l1-attributes.md`, `jovian/l1-attributes.md`): the storage
/// layout op-geth reads the L1 fee and operator fee from (slots 1, 3, 7, 8), and the two L1-info
/// setters the chain's blocks call, callable by the depositor account only.
///   slot 8: operatorFeeConstant u64 (offset 0), operatorFeeScalar u32 (offset 8),
///           daFootprintGasScalar u16 (offset 12, Jovian).
contract OracleL1Block {
    address constant DEPOSITOR = 0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001;

    uint64 public number;            // slot 0, low 8 bytes
    uint64 public timestamp;         // slot 0, next 8 bytes
    uint256 public basefee;          // slot 1
    bytes32 public hash;             // slot 2
    uint64 public sequenceNumber;    // slot 3, low 8 bytes
    uint32 public blobBaseFeeScalar; // slot 3
    uint32 public baseFeeScalar;     // slot 3
    bytes32 public batcherHash;      // slot 4
    uint256 public l1FeeOverhead;    // slot 5
    uint256 public l1FeeScalar;      // slot 6
    uint256 public blobBaseFee;      // slot 7
    uint64 public operatorFeeConstant;  // slot 8, offset 0
    uint32 public operatorFeeScalar;    // slot 8, offset 8
    uint16 public daFootprintGasScalar; // slot 8, offset 12

    /// The Ecotone fields: calldata after the selector, tightly packed: baseFeeScalar u32,
    /// blobBaseFeeScalar u32, sequenceNumber u64, timestamp u64, number u64, basefee u256,
    /// blobBaseFee u256, hash b32, batcherHash b32.
    function setEcotoneValues() internal {
        require(msg.sender == DEPOSITOR, "L1Block: only the depositor");
        assembly {
            sstore(3, shr(128, calldataload(4)))   // baseFeeScalar | blobBaseFeeScalar | sequenceNumber
            sstore(0, shr(128, calldataload(20)))  // timestamp | number
            sstore(1, calldataload(36))            // basefee
            sstore(7, calldataload(68))            // blobBaseFee
            sstore(2, calldataload(100))           // hash
            sstore(4, calldataload(132))           // batcherHash
        }
    }

    /// Isthmus (176 bytes): then operatorFeeScalar u32, operatorFeeConstant u64.
    function setL1BlockValuesIsthmus() external {
        setEcotoneValues();
        assembly {
            sstore(8, shr(160, calldataload(164)))
        }
    }

    /// Jovian (178 bytes): then daFootprintGasScalar u16.
    function setL1BlockValuesJovian() external {
        setEcotoneValues();
        assembly {
            sstore(8, or(shl(96, shr(240, calldataload(176))), shr(160, calldataload(164))))
        }
    }
}
