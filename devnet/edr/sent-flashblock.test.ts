import { describe, expect, it } from 'vitest';
import { startBlock } from '../../src/chain/assemble.ts';
import { flashblockSchema } from '../../src/schemas/flashblock.ts';
import { toFlashblock, toSubblock, ZERO32, type MinedBlock } from './sent-flashblock.ts';

const mined: MinedBlock = {
  number: '0x5',
  hash: `0x${'ab'.repeat(32)}`,
  parentHash: `0x${'01'.repeat(32)}`,
  timestamp: '0x10',
  transactions: [],
  stateRoot: `0x${'cd'.repeat(32)}`,
  receiptsRoot: `0x${'ef'.repeat(32)}`,
  logsBloom: `0x${'0'.repeat(512)}`,
  gasUsed: '0x5208',
  gasLimit: '0x1c9c380',
  miner: '0x4200000000000000000000000000000000000011',
  mixHash: `0x${'02'.repeat(32)}`,
  extraData: '0x',
  baseFeePerGas: '0x1',
  withdrawalsRoot: `0x${'12'.repeat(32)}`,
  parentBeaconBlockRoot: `0x${'03'.repeat(32)}`,
};

describe("the devnet's subblocks form", () => {
  it('zeroes state_root, block_hash, withdrawals_root and empties withdrawals; every other field is the flashblock as built', () => {
    const built = toFlashblock({ payloadId: '0x0000000000000005', index: 0, number: 5n }, mined, ['0x02c0'], {});
    const sub = toSubblock(built);
    expect(sub.diff).toEqual({ ...built.diff, state_root: ZERO32, block_hash: ZERO32, withdrawals_root: ZERO32, withdrawals: [] });
    expect({ ...sub, diff: undefined }).toEqual({ ...built, diff: undefined });
    // The producer keeps its real values: the built flashblock is untouched.
    expect([built.diff.state_root, built.diff.block_hash]).toEqual([mined.stateRoot, mined.hash]);
    // It decodes as any flashblock, and the assembled block holds the zeros as given.
    const header = startBlock(flashblockSchema.parse(JSON.parse(JSON.stringify(sub)))).header;
    expect([header.stateRoot, header.flashblockHash, header.withdrawalsRoot]).toEqual([ZERO32, ZERO32, ZERO32]);
  });
});
