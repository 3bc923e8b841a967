import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAccount, createAddressFromString, ValueEncoding, type BatchDBOp, type DB } from '@ethereumjs/util';
import { bytesToHex, concat, hexToBytes, keccak256, numberToHex, sha256, toFunctionSelector, toHex, toRlp, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { serializeTransaction } from 'viem/op-stack';
import type { BlockHeader } from '../../src/op/header.ts';
import { forksAtGenesis, parseRollupConfig, type RollupConfig } from '../../src/op/rollup-config.ts';
import { emptyTrieRoot, witnessFromRecord, type Witness } from '../../src/evm/op/witness-state.ts';

/**
 * A small OP Stack chain built from nothing, for executing blocks of later forks without a node:
 * a pre-state of a few funded accounts (all its trie nodes are the witness), a parent header
 * pointing at it, L1-info deposits in the Isthmus and Jovian forms, and signed user transactions.
 */
export const chainId = 901;
export const jovianTime = 1_000;
export const sender = privateKeyToAccount(keccak256(toHex('flashlog synthetic OP block sender')));
export const recipient = '0x00000000000000000000000000000000000000aa' as const;
const l1Block = '0x4200000000000000000000000000000000000015' as const;
const depositor = '0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001' as const;

export const config: RollupConfig = parseRollupConfig({
  l2_chain_id: chainId,
  block_time: 2,
  ...forksAtGenesis('isthmus'),
  jovian_time: jovianTime,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});

/** A key/value store that keeps every trie node the state writes, to hand out as preimages. */
function recordingDb(nodes: Map<string, Uint8Array>): DB<string, Uint8Array> {
  const key = (k: string | Uint8Array) => (typeof k === 'string' ? k : bytesToHex(k).slice(2));
  return {
    async get(k) {
      return nodes.get(key(k));
    },
    async put(k, v) {
      nodes.set(key(k), v);
    },
    async del() {},
    async batch(ops: BatchDBOp<string, Uint8Array>[]) {
      for (const op of ops) if (op.type === 'put') nodes.set(key(op.key), op.value);
    },
    shallowCopy() {
      return recordingDb(nodes);
    },
    async open() {},
  };
}

/**
 * The pre-state: the sender funded with 10 ETH, and L1Block's storage holding what its L1-info
 * deposit would have stored (slot 8: operatorFeeScalar at bytes 20–24, operatorFeeConstant at
 * 24–32). Its whole trie is the witness.
 */
export async function preState(
  operatorFee = { scalar: 0, constant: 0n },
): Promise<{ stateRoot: Hex; witness: Witness; preimages: Record<Hex, Hex> }> {
  const nodes = new Map<string, Uint8Array>();
  const trie = new MerklePatriciaTrie({ db: recordingDb(nodes), useKeyHashing: true, valueEncoding: ValueEncoding.Bytes });
  const state = new MerkleStateManager({ trie, prefixCodeHashes: false });
  await state.putAccount(createAddressFromString(sender.address), createAccount({ balance: 10n ** 19n }));
  if (operatorFee.scalar !== 0 || operatorFee.constant !== 0n) {
    const l1BlockAddress = createAddressFromString(l1Block);
    await state.putAccount(l1BlockAddress, createAccount({ nonce: 1n })); // not empty: EIP-161 would remove it when the deposit touches it
    const word = concat([numberToHex(operatorFee.scalar, { size: 4 }), numberToHex(operatorFee.constant, { size: 8 })]);
    await state.putStorage(l1BlockAddress, hexToBytes(numberToHex(8, { size: 32 })), hexToBytes(word));
  }
  await state.flush();
  const stateRoot = bytesToHex(await state.getStateRoot());
  const preimages = Object.fromEntries([...nodes].map(([k, v]) => [`0x${k}`, bytesToHex(v)])) as Record<Hex, Hex>;
  return { stateRoot, witness: witnessFromRecord(preimages), preimages };
}

/** A parent header at `timestamp` over `stateRoot`. */
export function parentHeader(stateRoot: Hex, over: Partial<BlockHeader>): BlockHeader {
  return {
    parentHash: keccak256(toHex('grandparent')),
    sha3Uncles: keccak256(toRlp([])),
    miner: '0x4200000000000000000000000000000000000011',
    stateRoot,
    transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot,
    logsBloom: `0x${'00'.repeat(256)}`,
    difficulty: 0n,
    number: 100n,
    gasLimit: 30_000_000n,
    gasUsed: 1_000_000n,
    timestamp: BigInt(jovianTime),
    extraData: '0x',
    mixHash: keccak256(toHex('randao')),
    nonce: '0x0000000000000000',
    baseFeePerGas: 1_000_000n,
    withdrawalsRoot: emptyTrieRoot,
    blobGasUsed: 0n,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: keccak256(toHex('beacon')),
    requestsHash: sha256('0x'),
    ...over,
  };
}

/**
 * L1-info calldata in the packed Isthmus form (176 bytes), or the Jovian form (178 bytes) when a
 * DA footprint gas scalar is given (OP Stack specs, jovian/l1-attributes.md).
 */
export function l1InfoCalldata(
  daFootprintGasScalar?: number,
  fields: { operatorFeeScalar?: number; operatorFeeConstant?: bigint } = {},
): Hex {
  const u = (value: bigint | number, size: number) => numberToHex(value, { size });
  return concat([
    toFunctionSelector(daFootprintGasScalar === undefined ? 'setL1BlockValuesIsthmus()' : 'setL1BlockValuesJovian()'),
    u(1_368, 4), // baseFeeScalar
    u(810_949, 4), // blobBaseFeeScalar
    u(3, 8), // sequenceNumber
    u(1_700_000_000, 8), // L1 timestamp
    u(20_000_000, 8), // L1 block number
    u(7_000_000_000n, 32), // L1 base fee
    u(1n, 32), // blob base fee
    keccak256(toHex('l1 block')),
    keccak256(toHex('batcher')),
    u(fields.operatorFeeScalar ?? 0, 4),
    u(fields.operatorFeeConstant ?? 0n, 8),
    ...(daFootprintGasScalar === undefined ? [] : [u(daFootprintGasScalar, 2)]),
  ]);
}

/** A deposit from the L1-info depositor to L1Block carrying `data` (L1Block has no code here). */
export function l1InfoDeposit(data: Hex): Hex {
  return serializeTransaction({
    type: 'deposit',
    sourceHash: keccak256(data),
    from: depositor,
    to: l1Block,
    mint: 0n,
    value: 0n,
    gas: 1_000_000n,
    isSystemTx: false,
    data,
  });
}

/** A signed EIP-1559 transfer from the sender with `data` as calldata. */
export async function userTx(nonce: number, data: Hex = '0x'): Promise<Hex> {
  return sender.signTransaction({
    type: 'eip1559',
    chainId,
    nonce,
    to: recipient,
    value: 1n,
    gas: 200_000n,
    maxFeePerGas: 10n ** 12n,
    maxPriorityFeePerGas: 1n,
    data,
  });
}
