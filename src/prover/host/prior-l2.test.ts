import { keccak256, numberToHex, toHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { encodeDeposit } from '../../op/deposit-tx.ts';
import { l1BlockInfoOf, l1InfoDeposit } from '../../derive/l1-info-deposit.ts';
import type { SystemConfig } from '../../derive/system-config.ts';
import { encodeHeader, headerToRpc } from '../../op/header.ts';
import { forksAtGenesis, parseRollupConfig, rulesAt } from '../../op/rollup-config.ts';
import { emptyTrieRoot } from '../../evm/op/witness-state.ts';
import { priorL2Blocks } from './prior-l2.ts';

/**
 * The L2 blocks before the agreed one that the host hands the enclave, on a stub L2 RPC serving
 * 40 blocks (block n on L1 origin ⌊n / 6⌋, each with its L1-info deposit; block 0 the genesis):
 * back to the first block on an L1 origin before the first L1 block derivation reads, to the
 * genesis, or `limit` blocks (Base's Denim: one second's), read several at a time.
 */
const rollup = parseRollupConfig({
  l2_chain_id: 901,
  block_time: 2,
  ...forksAtGenesis('jovian'),
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});
const systemConfig: SystemConfig = {
  batcher: `0x${'33'.repeat(20)}`,
  overhead: toHex(0, { size: 32 }),
  scalar: toHex(1n << 248n, { size: 32 }),
  gasLimit: 30_000_000n,
  eip1559Params: '0x0000000000000000',
  operatorFeeParams: toHex(0, { size: 32 }),
  minBaseFee: 0n,
  daFootprintGasScalar: 0,
};
const zero = toHex(0, { size: 32 });

function block(n: bigint) {
  const rules = rulesAt(rollup, 2n * n);
  const origin = n / 6n;
  const deposit = l1InfoDeposit(
    l1BlockInfoOf(
      { hash: keccak256(toHex(`l1 ${origin}`)), number: origin, timestamp: 12n * origin, baseFeePerGas: 1n, blobBaseFee: 1n },
      n % 6n,
      systemConfig,
      'jovian',
    ),
    rules,
  );
  const raw = encodeDeposit(deposit);
  const header = {
    parentHash: zero,
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347' as Hex,
    miner: '0x4200000000000000000000000000000000000011' as Hex,
    stateRoot: zero,
    transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot,
    logsBloom: `0x${'00'.repeat(256)}` as Hex,
    difficulty: 0n,
    number: n,
    gasLimit: 30_000_000n,
    gasUsed: 0n,
    timestamp: 2n * n,
    extraData: '0x' as Hex,
    mixHash: zero,
    nonce: '0x0000000000000000' as Hex,
    baseFeePerGas: 1n,
    withdrawalsRoot: emptyTrieRoot,
    blobGasUsed: 0n,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: zero,
    requestsHash: '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' as Hex,
  };
  const rlp = encodeHeader(header);
  const transactions =
    n === 0n
      ? []
      : [
          {
            hash: keccak256(raw),
            type: '0x7e',
            from: deposit.from,
            to: deposit.to,
            gas: numberToHex(deposit.gas),
            value: '0x0',
            mint: '0x0',
            isSystemTx: deposit.isSystemTx,
            sourceHash: deposit.sourceHash,
            input: deposit.data,
            nonce: '0x0',
          },
        ];
  return { rpc: { ...headerToRpc(header), hash: keccak256(rlp), transactions }, rlp };
}

function stubL2(count: number) {
  const blocks = Array.from({ length: count }, (_, n) => block(BigInt(n)));
  const stats = { calls: 0, inFlight: 0, maxInFlight: 0 };
  const l2 = async (method: string, params: readonly unknown[]) => {
    expect(method).toBe('eth_getBlockByNumber');
    stats.calls++;
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    await new Promise((resolve) => setTimeout(resolve, 1));
    stats.inFlight--;
    return blocks[Number(BigInt(params[0] as string))]?.rpc ?? null;
  };
  /** The numbers of the blocks whose header RLP is among `values`. */
  const headersIn = (values: readonly Hex[]) => blocks.flatMap((b, n) => (values.includes(b.rlp) ? [n] : []));
  return { l2, stats, headersIn };
}

describe('priorL2Blocks', () => {
  it('walks back to the first block on an L1 origin before the first L1 block read, several blocks at a time', async () => {
    const { l2, stats, headersIn } = stubL2(40);
    const values = await priorL2Blocks(l2, 30n, 3n);
    // Blocks 29 down to 18 are on L1 origins 4 and 3; block 17 (origin 2) is the last one read.
    expect(headersIn(values)).toEqual(Array.from({ length: 13 }, (_, i) => 17 + i));
    expect(stats.maxInFlight).toBeGreaterThan(1);
    expect(stats.maxInFlight).toBeLessThanOrEqual(16);
  });

  it('stops at `limit` blocks (one second of a Denim chain) and at the genesis block', async () => {
    const { l2, stats, headersIn } = stubL2(40);
    expect(headersIn(await priorL2Blocks(l2, 30n, 0n, 5))).toEqual([25, 26, 27, 28, 29]);
    expect(stats.calls).toBe(5);
    expect(headersIn(await priorL2Blocks(l2, 4n, 0n))).toEqual([0, 1, 2, 3]);
  });

  it('names a block the node does not have', async () => {
    const { l2 } = stubL2(10);
    await expect(priorL2Blocks(l2, 12n, 0n)).rejects.toThrow(/L2 block 11 not found on the L2 RPC/);
  });
});
