// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/**
 * The BaseTime proxy of the Denim test chain (test/helpers/denim-chain.ts), at
 * 0x4200000000000000000000000000000000000030: an EIP-1967 proxy that forwards every call to the
 * implementation in its implementation slot. Genesis sets its admin slot to the ProxyAdmin
 * (0x4200…0018) and leaves the implementation slot zero, as Denim's activation expects; the
 * activation block installs the implementation and sets the slot. Base's predeploy proxy also has
 * admin functions; none is called here.
 */
contract DenimChainProxy {
    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;

    fallback() external payable {
        assembly {
            let implementation := sload(IMPLEMENTATION_SLOT)
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), implementation, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }
}
