import { fromRlp, slice, zeroAddress, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { describe, expect, it } from 'vitest';
import { outputRootV0 } from '../prover/output-root.ts';
import { scheduleIdOf } from '../prover/schedule-id.ts';
import { encodeReceipt } from '../evm/receipts.ts';
import {
  BASE_TIME_DEPOSIT_GAS,
  BASE_TIME_PREDEPLOY,
  DEPOSITOR_ACCOUNT,
  baseTimeDeposit,
  baseTimeMillisPart,
  baseTimeSourceHash,
  timestampMs,
} from './basetime.ts';
import { parseRollupConfig } from './rollup-config.ts';
import { vectors } from '../../test/helpers/base-denim-native-chain.ts';

/**
 * Base's own Denim vectors (test/fixtures/base-denim-native/SOURCE.md): the frozen values of
 * base/base `crates/proof/client/tests/denim_native.rs` @6cf00165, held against flashlog's output
 * root, BaseTime deposit, receipt encoding and scheduleId, from the values alone. The engine rebuilds
 * the chain to its block hashes and state roots in test/integration/base-denim-native-chain.test.ts.
 */
const zeroBloom: Hex = `0x${'00'.repeat(256)}`;

describe('base/base denim_native.rs vectors (chain 999999999, Denim at t = 14)', () => {
  it.each(vectors.blocks)('block $number: output root v0 of its state root, the empty message-passer root and its hash', (block) => {
    expect(outputRootV0(block.stateRoot, vectors.chain.messagePasserStorageRoot, block.blockHash)).toBe(block.outputRoot);
  });

  it.each(vectors.blocks)('block $number: tx[1] is the BaseTime deposit flashlog builds for its number and millisecond part', (block) => {
    expect(baseTimeDeposit({ blockNumber: BigInt(block.number), millisPart: block.timestampMillisPart })).toBe(block.baseTimeTransaction);
    const tx = parseTransaction(block.baseTimeTransaction as `0x7e${string}`);
    if (tx.type !== 'deposit') throw new Error(`block ${block.number}: tx[1] is a ${tx.type} transaction`);
    // The source hash is domain 3 over the L2 block number (settles the form basetime.ts left UNCONFIRMED).
    expect(tx.sourceHash).toBe(baseTimeSourceHash(BigInt(block.number)));
    expect(tx.from?.toLowerCase()).toBe(DEPOSITOR_ACCOUNT);
    expect(tx.to?.toLowerCase()).toBe(BASE_TIME_PREDEPLOY);
    expect(tx.gas).toBe(BASE_TIME_DEPOSIT_GAS);
    expect(baseTimeMillisPart({ type: '0x7e', from: tx.from, to: tx.to, input: tx.data })).toBe(block.timestampMillisPart);
  });

  it.each(vectors.blocks)(
    'block $number: the BaseTime receipt is a successful deposit receipt without Regolith/Canyon fields, no logs',
    (block) => {
      const [status, cumulative, bloom, logs, ...rest] = fromRlp(slice(block.baseTimeReceipt, 1)) as Hex[];
      expect(status).toBe('0x01');
      expect(bloom).toBe(zeroBloom);
      expect(logs).toEqual([]);
      expect(rest).toEqual([]);
      expect(encodeReceipt({ type: 0x7e, status: 1, cumulativeGasUsed: BigInt(cumulative!), logsBloom: zeroBloom, logs: [] })).toBe(
        block.baseTimeReceipt,
      );
    },
  );

  it('the blocks run 200 ms apart from Denim on, six children of the agreed block #1', () => {
    const ms = vectors.blocks.map((b) => timestampMs(BigInt(b.timestamp), b.timestampMillisPart));
    expect(ms[0]).toBe(BigInt(vectors.chain.denimTime) * 1000n);
    for (let i = 1; i < ms.length; i++) expect(ms[i]! - ms[i - 1]!).toBe(200n);
    expect(vectors.blocks.map((b) => b.number)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("the claim's scheduleId is the one the Rust test's boot info pins", () => {
    const config = parseRollupConfig({
      l2_chain_id: vectors.chain.l2ChainId,
      block_time: vectors.chain.blockTime,
      denim_time: vectors.chain.denimTime,
      chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
      genesis: {
        l1: { hash: `0x${'00'.repeat(32)}`, number: 0 },
        l2: { hash: `0x${'00'.repeat(32)}`, number: 0 },
        l2_time: vectors.chain.l2Genesis.timestamp,
        system_config: {
          batcherAddr: zeroAddress,
          overhead: `0x${'00'.repeat(32)}`,
          scalar: `0x${'00'.repeat(32)}`,
          gasLimit: vectors.chain.l2Genesis.gasLimit,
        },
      },
    });
    expect(scheduleIdOf(config, vectors.chain.claimBlock)).toBe(vectors.scheduleId);
  });
});
