// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IBaseTime {
    function timestampMs() external view returns (uint64);
}

/**
 * A user contract of the Denim test chain that reads BaseTime's `timestampMs()` in a transaction,
 * stores it and logs it, so a receipt shows the millisecond time the block ran at. Before Denim the
 * BaseTime proxy has no implementation and the call reverts.
 */
contract BaseTimeReader {
    event Read(uint64 timestampMs);

    uint64 public last;

    function read() external returns (uint64 ms) {
        ms = IBaseTime(0x4200000000000000000000000000000000000030).timestampMs();
        last = ms;
        emit Read(ms);
    }
}
