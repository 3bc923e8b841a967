// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// The devnet's L1Block predeploy (0x4200000000000000000000000000000000000015): the storage layout
/// and getters of OP's L1Block (Isthmus), written from the OP spec (`isthmus/l1-attributes.md`).
/// One difference: `setL1BlockValuesIsthmus` accepts any caller. EDR's mempool reads a deposit's
/// nonce as 0 and refuses a deposit whose sender's nonce is not 0, so the depositor account
/// (0xdead…0001) can send only one deposit in EDR's lifetime; the devnet's L1-attributes deposit of
/// block N therefore comes from a fresh account (see `l1AttributesSender` in deposit.ts).
/// op-revm reads the fee slots (1 basefee, 3 scalars, 7 blobBaseFee, 8 operator fee) directly.
contract DevnetL1Block {
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
    uint64 public operatorFeeConstant; // slot 8, low 8 bytes
    uint32 public operatorFeeScalar;   // slot 8

    /// Calldata after the selector, tightly packed: baseFeeScalar u32, blobBaseFeeScalar u32,
    /// sequenceNumber u64, timestamp u64, number u64, basefee u256, blobBaseFee u256, hash b32,
    /// batcherHash b32, operatorFeeScalar u32, operatorFeeConstant u64.
    function setL1BlockValuesIsthmus() external {
        assembly {
            sstore(3, shr(128, calldataload(4)))   // baseFeeScalar | blobBaseFeeScalar | sequenceNumber
            sstore(0, shr(128, calldataload(20)))  // timestamp | number
            sstore(1, calldataload(36))            // basefee
            sstore(7, calldataload(68))            // blobBaseFee
            sstore(2, calldataload(100))           // hash
            sstore(4, calldataload(132))           // batcherHash
            sstore(8, shr(160, calldataload(164))) // operatorFeeScalar | operatorFeeConstant
        }
    }
}
