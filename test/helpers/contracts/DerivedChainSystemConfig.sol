// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// The SystemConfig of the derived test chain (test/helpers/derived-chain.ts) on its L1: only the
/// event derivation reads, written from the OP spec (`specs/protocol/system-config.md`):
///
///   event ConfigUpdate(uint256 indexed version, UpdateType indexed updateType, bytes data)
///
/// `data` is `abi.encode(bytes payload)`, one payload per update type. It keeps no state and has no
/// owner: a test chain's L1 has no one to keep out.
contract DerivedChainSystemConfig {
    enum UpdateType {
        BATCHER,
        FEE_SCALARS,
        GAS_LIMIT,
        UNSAFE_BLOCK_SIGNER,
        EIP_1559_PARAMS,
        OPERATOR_FEE_PARAMS,
        MIN_BASE_FEE,
        DA_FOOTPRINT_GAS_SCALAR
    }

    uint256 internal constant VERSION = 0;

    event ConfigUpdate(uint256 indexed version, UpdateType indexed updateType, bytes data);

    function setGasLimit(uint64 gasLimit) external {
        emit ConfigUpdate(VERSION, UpdateType.GAS_LIMIT, abi.encode(gasLimit));
    }

    /// Ecotone's scalar: version 1 in the top byte, blobBaseFeeScalar at bytes 24..28, baseFeeScalar at 28..32.
    function setGasConfigEcotone(uint32 baseFeeScalar, uint32 blobBaseFeeScalar) external {
        uint256 scalar = (uint256(0x01) << 248) | (uint256(blobBaseFeeScalar) << 32) | uint256(baseFeeScalar);
        emit ConfigUpdate(VERSION, UpdateType.FEE_SCALARS, abi.encode(bytes32(0), bytes32(scalar)));
    }

    function setEIP1559Params(uint32 denominator, uint32 elasticity) external {
        emit ConfigUpdate(VERSION, UpdateType.EIP_1559_PARAMS, abi.encode((uint256(denominator) << 32) | uint256(elasticity)));
    }

    function setOperatorFeeScalars(uint32 scalar, uint64 constant_) external {
        emit ConfigUpdate(VERSION, UpdateType.OPERATOR_FEE_PARAMS, abi.encode((uint256(scalar) << 64) | uint256(constant_)));
    }

    function setMinBaseFee(uint64 minBaseFee) external {
        emit ConfigUpdate(VERSION, UpdateType.MIN_BASE_FEE, abi.encode(minBaseFee));
    }

    function setDAFootprintGasScalar(uint16 scalar) external {
        emit ConfigUpdate(VERSION, UpdateType.DA_FOOTPRINT_GAS_SCALAR, abi.encode(scalar));
    }
}
