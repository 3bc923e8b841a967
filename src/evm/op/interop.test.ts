import { keccak256, stringToHex, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { crossChainMessagesIn, crossL2Inbox, executingMessageTopic } from './interop.ts';

const account = privateKeyToAccount(keccak256(stringToHex('flashlog interop test')));
const sign = (accessList: { address: Hex; storageKeys: Hex[] }[]) =>
  account.signTransaction({
    type: 'eip1559',
    chainId: 10,
    nonce: 0,
    to: '0x00000000000000000000000000000000000000aa',
    gas: 100_000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
    accessList,
  });
const deposit: Hex = '0x7ef8';

describe('cross-chain messages in a block (specs interop/predeploys.md, CrossL2Inbox)', () => {
  it('the ExecutingMessage topic is keccak of the event with the Identifier tuple (messaging.md)', () => {
    expect(executingMessageTopic).toBe(keccak256(toHex('ExecutingMessage(bytes32,(address,uint256,uint256,uint256,uint256))')));
  });

  it('finds a CrossL2Inbox access-list entry and a CrossL2Inbox ExecutingMessage log, and nothing else', async () => {
    const checksum = `0x03${'11'.repeat(31)}` as Hex;
    const declared = await sign([{ address: crossL2Inbox, storageKeys: [checksum] }]);
    const unrelated = await sign([{ address: '0x00000000000000000000000000000000000000bb', storageKeys: [checksum] }]);
    const plain = await sign([]);
    const log = (address: Hex, topic: Hex) => ({ address, topics: [topic], data: '0x' as Hex });
    const receipts = [
      { logs: [] },
      { logs: [] },
      { logs: [log(crossL2Inbox, executingMessageTopic)] },
      { logs: [log('0x00000000000000000000000000000000000000cc', executingMessageTopic), log(crossL2Inbox, keccak256('0x01'))] },
      { logs: [] },
    ];
    expect(crossChainMessagesIn([deposit, declared, plain, unrelated, unrelated], receipts)).toEqual([
      { index: 1, by: 'access list' },
      { index: 2, by: 'ExecutingMessage log' },
    ]);
  });
});
