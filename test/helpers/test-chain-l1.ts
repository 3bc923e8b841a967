import { concat, keccak256, numberToHex, pad, slice, stringToHex, toFunctionSelector, type Hex } from 'viem';
import { DEPOSITOR_ACCOUNT } from '../../src/op/basetime.ts';
import { encodeDeposit, sourceHash } from '../../src/op/deposit-tx.ts';
import { l1AttributesCalldata, type L1Attributes } from '../../devnet/deposit.ts';

/** The L1Block predeploy, which the L1-info deposit calls. */
const L1_BLOCK: Hex = '0x4200000000000000000000000000000000000015';

/**
 * The L1 attributes of block `n` of an engine-built test chain (test/helpers/denim-chain.ts,
 * lagoon-chain.ts): a new L1 origin every third block, its hash named after `chain`, so each chain
 * has L1 origins of its own.
 */
export function testChainL1Attributes(chain: string, genesisTime: bigint, n: bigint): L1Attributes {
  const origin = n / 3n;
  return {
    l1Number: 21_000_000n + origin,
    l1Timestamp: genesisTime - 12n + origin * 12n,
    l1BaseFee: 7_000_000_000n + origin,
    l1BlobBaseFee: 3n + origin,
    l1Hash: keccak256(stringToHex(`flashlog ${chain} chain L1 block ${origin}`)),
    sequenceNumber: n % 3n,
    batcherHash: pad('0x0ba5e0', { size: 32 }),
    baseFeeScalar: 2_269,
    blobBaseFeeScalar: 1_055_762,
    operatorFeeScalar: 7,
    operatorFeeConstant: 500n,
  };
}

/** The L1-info deposit of block `n` in Jovian's form (`setL1BlockValuesJovian`, the DA footprint scalar 400 last). */
export function testChainL1InfoDeposit(chain: string, genesisTime: bigint, n: bigint): Hex {
  const attributes = testChainL1Attributes(chain, genesisTime, n);
  const data = concat([
    toFunctionSelector('setL1BlockValuesJovian()'),
    slice(l1AttributesCalldata(attributes), 4),
    numberToHex(400, { size: 2 }),
  ]);
  return encodeDeposit({
    sourceHash: sourceHash(1n, attributes.l1Hash, attributes.sequenceNumber),
    from: DEPOSITOR_ACCOUNT,
    to: L1_BLOCK,
    mint: 0n,
    value: 0n,
    gas: 1_000_000n,
    isSystemTx: false,
    data,
  });
}
