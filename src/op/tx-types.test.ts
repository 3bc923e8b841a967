import { keccak256, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { FlashlogError } from '../errors.ts';
import { EnclaveRefusal } from '../prover/enclave/refusal.ts';
import { reexecuteBlock } from '../prover/enclave/reexecute.ts';
import { devnetRollupConfig } from './chains.ts';
import { executeBlock, type PayloadAttributes } from '../evm/op/execute-block.ts';
import { encodeHeader, type BlockHeader } from './header.ts';
import { knownTxTypes, refuseUnknownTxTypes, unknownTxType } from './tx-types.ts';

const zero: Hex = `0x${'0'.repeat(64)}`;
/** An EIP-1559 envelope's first bytes, a deposit's, a legacy RLP list's, Base Everest's 0x79 and Lagoon's 0x7D. */
const eip1559: Hex = '0x02f86b0180';
const deposit: Hex = '0x7ef8f8a0';
const legacy: Hex = '0xf86c0185';
const everest: Hex = '0x79c9018203e8c4c3800102';
const postExec: Hex = '0x7dc801820400c3c20105';

const header = (number: bigint): BlockHeader => ({
  parentHash: zero,
  sha3Uncles: keccak256('0xc0'),
  miner: '0x4200000000000000000000000000000000000011',
  stateRoot: zero,
  transactionsRoot: zero,
  receiptsRoot: zero,
  logsBloom: `0x${'0'.repeat(512)}`,
  difficulty: 0n,
  number,
  gasLimit: 30_000_000n,
  gasUsed: 0n,
  timestamp: 1_000n + number,
  extraData: '0x',
  mixHash: zero,
  nonce: '0x0000000000000000',
  baseFeePerGas: 1_000_000n,
  withdrawalsRoot: zero,
  blobGasUsed: 0n,
  excessBlobGas: 0n,
  parentBeaconBlockRoot: zero,
  requestsHash: zero,
});

describe('transaction types flashlog does not know', () => {
  it('are the typed ones outside 0x00-0x04, 0x7d and 0x7e; a legacy RLP list is known', () => {
    expect([eip1559, deposit, legacy, postExec].map(unknownTxType)).toEqual([undefined, undefined, undefined, undefined]);
    expect(unknownTxType(everest)).toBe(0x79);
    expect(unknownTxType('0x7f00')).toBe(0x7f);
    expect([...knownTxTypes].sort((a, b) => a - b)).toEqual([0x00, 0x01, 0x02, 0x03, 0x04, 0x7d, 0x7e]);
  });

  it('a block holding one is refused by block, transaction index and type, with a catalogue code', () => {
    expect(() => refuseUnknownTxTypes(7n, [deposit, eip1559])).not.toThrow();
    const refused = (() => {
      try {
        refuseUnknownTxTypes(7n, [deposit, eip1559, everest]);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(FlashlogError);
    expect((refused as FlashlogError).code).toBe('TX_TYPE_UNSUPPORTED');
    expect((refused as Error).message).toMatch(/^block 7: transaction 2 has type 0x79/);
  });

  it('execute-block refuses before executing anything', async () => {
    const attributes = { transactions: [deposit, everest] } as unknown as PayloadAttributes;
    const run = executeBlock({ config: devnetRollupConfig, parent: header(9n), attributes, witness: {} as never });
    await expect(run).rejects.toMatchObject({
      code: 'TX_TYPE_UNSUPPORTED',
      message: expect.stringMatching(/^block 10: transaction 1 has type 0x79/),
    });
  });

  it('the enclave refuses such a block by name and signs nothing', async () => {
    const attributes = { transactions: [deposit, everest] } as unknown as PayloadAttributes;
    const parentRlp = encodeHeader(header(10n));
    const rlp = encodeHeader({ ...header(11n), parentHash: keccak256(parentRlp) });
    const run = reexecuteBlock(devnetRollupConfig, parentRlp, rlp, {} as never, attributes);
    await expect(run).rejects.toBeInstanceOf(EnclaveRefusal);
    await expect(run).rejects.toThrow(/L2 block 11: .*block 11: transaction 1 has type 0x79/);
  });
});
