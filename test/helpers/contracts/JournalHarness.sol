// SPDX-License-Identifier: MIT
pragma solidity ^0.8.15;

// flashlog's own harness for the TEE proof journal as Base's L1 contracts check it: the fields,
// their order and packing of base/contracts `src/L1/proofs/AggregateVerifier.sol` @4f7acda5
// (`_verifyTeeProof`, lines 962-973: abi.encodePacked of proposer, l1OriginHash, startingRoot,
// startingL2SequenceNumber (uint64), endingRoot, endingL2SequenceNumber (uint64),
// intermediateRoots (bytes), CONFIG_HASH, TEE_IMAGE_HASH, scheduleId) and the signer recovery of
// `src/L1/proofs/tee/TEEVerifier.sol` (`proofBytes` = proposer(20) ‖ signature(65), recovered over
// the journal hash itself, no EIP-191 prefix, v as 27/28). Written from that description, not
// copied: no registry, no image check, only the hashing and the recovery.
contract JournalHarness {
    struct Journal {
        address proposer;
        bytes32 l1OriginHash;
        bytes32 startingRoot;
        uint64 startingL2SequenceNumber;
        bytes32 endingRoot;
        uint64 endingL2SequenceNumber;
        bytes intermediateRoots;
        bytes32 configHash;
        bytes32 teeImageHash;
        bytes32 scheduleId;
    }

    error InvalidProofFormat();
    error InvalidSignature();

    function journalHash(Journal calldata j) public pure returns (bytes32) {
        return keccak256(
            abi.encodePacked(
                j.proposer,
                j.l1OriginHash,
                j.startingRoot,
                j.startingL2SequenceNumber,
                j.endingRoot,
                j.endingL2SequenceNumber,
                j.intermediateRoots,
                j.configHash,
                j.teeImageHash,
                j.scheduleId
            )
        );
    }

    // The signer a TEE proof (proposer ‖ r ‖ s ‖ v) recovers to over the journal's hash.
    function signerOf(Journal calldata j, bytes calldata proofBytes) external pure returns (bytes32 digest, address signer) {
        if (proofBytes.length < 85) revert InvalidProofFormat();
        if (address(bytes20(proofBytes[0:20])) != j.proposer) revert InvalidProofFormat();
        digest = journalHash(j);
        bytes32 r = bytes32(proofBytes[20:52]);
        bytes32 s = bytes32(proofBytes[52:84]);
        uint8 v = uint8(proofBytes[84]);
        signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
    }
}
