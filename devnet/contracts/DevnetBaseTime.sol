// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/**
 * The devnet's BaseTime predeploy (0x4200000000000000000000000000000000000030) as Base's Denim
 * specification describes it: a uint16 millisecond part in slot 0, written once per block by the
 * BaseTime deposit (tx[1]) from the depositor account. A block's time is
 * 1000 x block.timestamp + the millisecond part. Base's implementation sits behind a proxy and
 * accepts only the depositor account; the devnet puts this code at the predeploy address directly
 * and accepts any caller, because EDR refuses a deposit from an account whose nonce is not 0, so
 * each block's BaseTime deposit comes from a fresh devnet sender (see denim-producer.ts).
 */
contract DevnetBaseTime {
    uint16 public timestampMillisPart;

    function setTimestampMillisPart(uint16 millisPart) external {
        require(millisPart < 1000, "millis part out of range");
        timestampMillisPart = millisPart;
    }

    function timestampMs() external view returns (uint64) {
        return uint64(block.timestamp) * 1000 + timestampMillisPart;
    }
}
