import { keccak256, numberToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ProduceRecord } from '../../src/log/port.ts';
import { topics } from '../../src/records/topics.ts';
import { blockRecordSchema, type AccountDiff, type BlockRecord, type RpcReceipt } from '../../src/records/blocks.ts';
import { chainRecordSchema, type ChainRecord } from '../../src/records/chain.ts';
import { logRecordSchema, type RpcLog } from '../../src/records/logs.ts';

/**
 * Builds valid flashlog.blocks / flashlog.logs / flashlog.chain records (checked with the record
 * schemas) from real signed transactions, for view and gateway tests that run before an executor
 * exists. Each transaction emits one log per `logsPerTx` from `emitter`.
 */
export const senderKey = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;
export const sender = privateKeyToAccount(senderKey);
export const zeroHash = `0x${'0'.repeat(64)}` as Hex;
const zeroBloom = `0x${'0'.repeat(512)}` as Hex;
export const emitter = '0x5fbdb2315678afecb367f032d93f642f64180aa3' as const;
export const transferTopic = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef' as const;

export async function signedTransfers(
  count: number,
  startNonce = 0,
  to: Hex = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
): Promise<{ hash: Hex; raw: Hex }[]> {
  const out: { hash: Hex; raw: Hex }[] = [];
  for (let i = 0; i < count; i++) {
    const raw = await sender.signTransaction({
      chainId: 901,
      type: 'eip1559',
      nonce: startNonce + i,
      gas: 60_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
      to,
      value: BigInt(i + 1),
    });
    out.push({ hash: keccak256(raw), raw });
  }
  return out;
}

export interface BlockBuilder {
  /** The records of the next flashblock adding `txs`; the block record first, then one per log. */
  flashblock(
    txs: { hash: Hex; raw: Hex }[],
    options?: { stateDiff?: Record<string, AccountDiff>; logsPerTx?: number; emitters?: readonly Hex[]; data?: () => Hex },
  ): ProduceRecord[];
  readonly number: bigint;
  readonly timestamp: bigint;
  receipts(): RpcReceipt[];
  logs(): RpcLog[];
}

export function blockBuilder(number: bigint, options: { payloadId?: Hex; timestamp?: bigint } = {}): BlockBuilder {
  const payloadId = options.payloadId ?? (`0x${number.toString(16).padStart(16, '0')}` as Hex);
  const timestamp = options.timestamp ?? 1_700_000_000n + number * 2n;
  const transactions: { hash: Hex; raw: Hex }[] = [];
  const receipts: RpcReceipt[] = [];
  const stateDiff: Record<string, AccountDiff> = {};
  let index = -1;
  let gasUsed = 0n;
  let logIndex = 0;
  return {
    number,
    timestamp,
    receipts: () => receipts,
    logs: () => receipts.flatMap((receipt) => receipt.logs),
    flashblock(txs, fbOptions = {}) {
      index += 1;
      const firstNew = transactions.length;
      const newReceipts: RpcReceipt[] = [];
      for (const tx of txs) {
        const position = transactions.length;
        transactions.push(tx);
        gasUsed += 21_000n;
        const logs: RpcLog[] = [];
        for (let l = 0; l < (fbOptions.logsPerTx ?? 1); l++) {
          logs.push({
            address: fbOptions.emitters?.[(position + l) % fbOptions.emitters.length] ?? emitter,
            topics: [transferTopic, `0x${sender.address.slice(2).toLowerCase().padStart(64, '0')}`],
            data: fbOptions.data?.() ?? numberToHex(position * 10 + l, { size: 32 }),
            blockNumber: numberToHex(number),
            blockHash: zeroHash,
            blockTimestamp: numberToHex(timestamp),
            transactionHash: tx.hash,
            transactionIndex: numberToHex(position),
            logIndex: numberToHex(logIndex++),
            removed: false,
          });
        }
        newReceipts.push({
          transactionHash: tx.hash,
          transactionIndex: numberToHex(position),
          blockHash: zeroHash,
          blockNumber: numberToHex(number),
          from: sender.address.toLowerCase(),
          to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
          cumulativeGasUsed: numberToHex(gasUsed),
          gasUsed: '0x5208',
          effectiveGasPrice: '0x3b9aca00',
          contractAddress: null,
          logs,
          logsBloom: zeroBloom,
          status: '0x1',
          type: '0x2',
        });
      }
      receipts.push(...newReceipts);
      Object.assign(stateDiff, fbOptions.stateDiff ?? {});
      const value: BlockRecord = blockRecordSchema.parse({
        v: 1,
        blockNumber: numberToHex(number),
        index,
        payloadId,
        header: {
          number: numberToHex(number),
          parentHash: keccak256(numberToHex(number - 1n)),
          parentBeaconBlockRoot: zeroHash,
          miner: '0x4200000000000000000000000000000000000011',
          prevRandao: zeroHash,
          gasLimit: '0x1c9c380',
          timestamp: numberToHex(timestamp),
          extraData: '0x',
          baseFeePerGas: '0x3b9aca00',
          gasUsed: numberToHex(gasUsed),
          receiptsRoot: zeroHash,
          logsBloom: zeroBloom,
          stateRoot: zeroHash,
          flashblockHash: keccak256(numberToHex(number * 100n + BigInt(index))),
          withdrawalsRoot: zeroHash,
          blobGasUsed: '0x0',
          withdrawals: [],
        },
        transactions: [...transactions],
        firstNew,
        receipts: newReceipts,
        stateDiff: { ...stateDiff },
        executor: 'local',
      });
      const records: ProduceRecord[] = [{ topic: topics.blocks, key: number.toString(), value: JSON.stringify(value) }];
      for (const log of newReceipts.flatMap((receipt) => receipt.logs)) {
        const logValue = logRecordSchema.parse({ v: 1, index, ...log });
        records.push({ topic: topics.logs, key: log.address, value: JSON.stringify(logValue) });
      }
      return records;
    },
  };
}

export function chainRecord(value: Omit<ChainRecord, 'v'>): ProduceRecord {
  const parsed = chainRecordSchema.parse({ v: 1, ...value });
  return { topic: topics.chain, key: BigInt(parsed.blockNumber).toString(), value: JSON.stringify(parsed) };
}
