import { bytesToHex, concat, hexToBytes, keccak256, numberToHex, pad, slice, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';
import { attributesFromExtraData } from '../../op/base-fee.ts';
import { decodeHeaderRlp, type BlockHeader } from '../../op/header.ts';
import { l1InfoCalldata, parseL1Info } from '../../op/l1-info.ts';
import type { RollupConfig } from '../../op/rollup-config.ts';
import { readOrderedTrie, WitnessIncompleteError } from '../../evm/op/witness-state.ts';
import { deriveBlocks, type DeriveSafeHead, type DerivedBlock } from '../../derive/pipeline.ts';
import type { SafeBlock } from '../../derive/span-batch-validity.ts';
import type { SystemConfig } from '../../derive/system-config.ts';
import { outputRootV0 } from '../output-root.ts';
import type { PreimageStore } from './preimage-store.ts';
import { l1SourceFromPreimages } from './l1-preimages.ts';
import { rangeExecution } from './range-execution.ts';
import type { ReexecPool } from './reexec-pool.ts';
import type { PayloadAttributes } from '../../evm/op/execute-block.ts';
import { EnclaveRefusal } from './refusal.ts';

/**
 * The `derive` check: the enclave derives every L2 block of the range from L1 (src/derive, from
 * the request's hash-checked L1 preimages) on top of the agreed block, compares each derived
 * block with the header the host supplied for that number (its transactions one by one, then its
 * timestamp, fee recipient, prevRandao, gas limit and beacon root), and re-executes it from the
 * derived attributes; the rebuilt header must hash to the supplied one. A host that adds, drops,
 * reorders or forges a transaction (a deposit, a batch the batcher did not send) is refused with
 * the block and the reason, and nothing is signed.
 */
export interface DerivedRoot {
  readonly number: number;
  readonly outputRoot: Hex;
}

export async function deriveAndExecute(options: {
  readonly rollup: RollupConfig;
  readonly store: PreimageStore;
  readonly l1Head: Hex;
  readonly agreedHash: Hex;
  readonly claimedBlockNumber: number;
  /** Re-execution threads (reexec-pool.ts); without, each block runs here before derivation goes on. */
  readonly pool?: ReexecPool | undefined;
  /** The supplied header for `number` whose parent is `parentHash`, or a refusal. */
  readonly childOf: (parentHash: Hex, number: number) => { hash: Hex; rlp: Hex };
}): Promise<DerivedRoot[]> {
  const { rollup, store } = options;
  const witness = store.witness();
  const agreedRlp = bytesToHex(store.keccak(options.agreedHash)!);
  const safeHead = await safeHeadOf(agreedRlp, witness);
  const execution = rangeExecution(rollup, witness, options.pool);
  let parentRlp = agreedRlp;
  // The supplied block's hash goes back to derivation at once (it checks the next batch's parent
  // against it); its re-execution is queued and must rebuild that hash before anything is signed.
  const build = async (block: DerivedBlock): Promise<Hex> => {
    const number = Number(block.number);
    const supplied = options.childOf(keccak256(parentRlp), number);
    const header = decodeHeaderRlp(supplied.rlp, `L2 block ${number} header`);
    await compareWithDerived(block, header, witness);
    await execution.submit({ number, parentRlp, rlp: supplied.rlp, derived: derivedAttributes(block) });
    parentRlp = supplied.rlp;
    return supplied.hash;
  };
  const prior = await priorBlocksOf(agreedRlp, store, rollup);
  try {
    let refusal: unknown;
    try {
      await deriveBlocks({
        rollup,
        l1: l1SourceFromPreimages(store),
        l1Head: options.l1Head,
        safeHead,
        until: BigInt(options.claimedBlockNumber),
        build,
        priorBlocks: (number) => prior.get(number),
      });
    } catch (error) {
      refusal = error;
    }
    // A block before the one derivation stopped at that did not re-execute is the refusal, as in order.
    const executed = await execution.finish();
    if (refusal !== undefined) {
      if (refusal instanceof EnclaveRefusal) throw refusal;
      if (refusal instanceof FlashlogError || refusal instanceof WitnessIncompleteError)
        throw new EnclaveRefusal(`derivation from L1: ${refusal.message}`);
      throw refusal;
    }
    return executed.map((block) => ({
      number: block.number,
      outputRoot: outputRootV0(block.stateRoot, block.messagePasserStorageRoot, block.hash),
    }));
  } finally {
    execution.end();
  }
}

/** The derived payload attributes as the executor takes them. */
function derivedAttributes(block: DerivedBlock): PayloadAttributes {
  return {
    timestamp: block.attributes.timestamp,
    prevRandao: block.attributes.prevRandao,
    feeRecipient: block.attributes.suggestedFeeRecipient,
    gasLimit: block.attributes.gasLimit,
    parentBeaconBlockRoot: block.attributes.parentBeaconBlockRoot,
    eip1559Params: block.attributes.eip1559Params,
    minBaseFee: block.attributes.minBaseFee,
    transactions: block.attributes.transactions,
  };
}

/** The transactions and header fields a supplied block must share with the derived one. */
async function compareWithDerived(block: DerivedBlock, header: BlockHeader, witness: ReadonlyMap<Hex, Uint8Array>): Promise<void> {
  const number = block.number;
  const supplied = await readOrderedTrie(witness, header.transactionsRoot, `L2 block ${number} transaction`);
  const derived = block.attributes.transactions;
  const describe = (tx: Hex | undefined) =>
    tx === undefined ? 'nothing' : `${tx.startsWith('0x7e') ? 'deposit' : 'transaction'} ${keccak256(tx)}`;
  for (let i = 0; i < Math.max(supplied.length, derived.length); i++) {
    if (supplied[i]?.toLowerCase() !== derived[i]?.toLowerCase())
      throw new EnclaveRefusal(
        `L2 block ${number}: transaction ${i} is ${describe(supplied[i])} in the supplied block, ${describe(derived[i])} in the block derived from L1 ` +
          `(${supplied.length} supplied, ${derived.length} derived; L1 origin ${block.l1Origin.number})`,
      );
  }
  const fields: [string, unknown, unknown][] = [
    ['timestamp', header.timestamp, block.attributes.timestamp],
    ['fee recipient', header.miner.toLowerCase(), block.attributes.suggestedFeeRecipient.toLowerCase()],
    ['prevRandao', header.mixHash.toLowerCase(), block.attributes.prevRandao.toLowerCase()],
    ['gas limit', header.gasLimit, block.attributes.gasLimit],
    ['parent beacon block root', header.parentBeaconBlockRoot?.toLowerCase(), block.attributes.parentBeaconBlockRoot?.toLowerCase()],
  ];
  for (const [name, have, want] of fields)
    if (have !== want)
      throw new EnclaveRefusal(`L2 block ${number}: ${name} is ${String(have)} in the supplied header, ${String(want)} derived from L1`);
}

/**
 * The agreed block as derivation's safe head: its L1 origin, sequence number and SystemConfig read
 * from its L1-info deposit and header (as kona rebuilds them), its transactions from its
 * transactionsRoot.
 */
async function safeHeadOf(rlp: Hex, witness: ReadonlyMap<Hex, Uint8Array>): Promise<DeriveSafeHead> {
  const header = decodeHeaderRlp(rlp, 'agreed L2 header');
  const transactions = await readOrderedTrie(witness, header.transactionsRoot, `agreed L2 block ${header.number} transaction`);
  const info = parseL1Info(l1InfoCalldata(transactions), `agreed L2 block ${header.number} L1-info deposit`);
  if (info.form === 'bedrock' || !info.l1BlockHash || info.l1BlockNumber === undefined || info.sequenceNumber === undefined)
    throw new EnclaveRefusal(`agreed L2 block ${header.number}: a pre-Ecotone L1-info deposit; derivation starts from Ecotone blocks`);
  const { eip1559Params, minBaseFee } = attributesFromExtraData(header.extraData);
  const scalar = concat([
    '0x01',
    pad('0x', { size: 23 }),
    numberToHex(info.blobBaseFeeScalar ?? 0, { size: 4 }),
    numberToHex(info.baseFeeScalar ?? 0, { size: 4 }),
  ]);
  const operatorFeeParams = concat([
    pad('0x', { size: 20 }),
    numberToHex(info.operatorFeeScalar ?? 0, { size: 4 }),
    numberToHex(info.operatorFeeConstant ?? 0n, { size: 8 }),
  ]);
  const systemConfig: SystemConfig = {
    batcher: slice(info.batcherHash!, 12, 32),
    overhead: pad('0x', { size: 32 }),
    scalar,
    gasLimit: header.gasLimit,
    eip1559Params: eip1559Params ?? '0x0000000000000000',
    operatorFeeParams,
    minBaseFee: minBaseFee === null ? 0n : BigInt(minBaseFee),
    daFootprintGasScalar: info.daFootprintGasScalar ?? 0,
  };
  return {
    hash: keccak256(rlp),
    number: header.number,
    timestamp: header.timestamp,
    l1Origin: { hash: info.l1BlockHash, number: info.l1BlockNumber },
    sequenceNumber: info.sequenceNumber,
    systemConfig,
    transactions: transactions.map((tx) => hexToBytes(tx)),
  };
}

/**
 * The safe blocks before the agreed one that the preimages hold (host: prior-l2.ts), walked back by
 * parent hash while a header and its transactions are there: what a span batch that starts before
 * the agreed block is checked against.
 */
async function priorBlocksOf(agreedRlp: Hex, store: PreimageStore, rollup: RollupConfig): Promise<Map<bigint, SafeBlock>> {
  const blocks = new Map<bigint, SafeBlock>();
  let header = decodeHeaderRlp(agreedRlp, 'agreed L2 header');
  for (;;) {
    const rlp = store.keccak(header.parentHash);
    if (!rlp) return blocks;
    const parent = decodeHeaderRlp(bytesToHex(rlp), `L2 block ${header.number - 1n} header`);
    let transactions: Hex[];
    try {
      transactions = await readOrderedTrie(store.witness(), parent.transactionsRoot, `L2 block ${parent.number} transaction`);
    } catch (error) {
      if (error instanceof WitnessIncompleteError) return blocks;
      throw error;
    }
    if (transactions.length === 0) {
      // The rollup's genesis block: no L1-info deposit; its L1 origin is the config's genesis L1 block.
      const genesis = rollup.genesis;
      if (genesis && BigInt(genesis.l2.number) === parent.number && genesis.l2.hash.toLowerCase() === keccak256(bytesToHex(rlp)))
        blocks.set(parent.number, {
          ref: {
            hash: keccak256(bytesToHex(rlp)),
            number: parent.number,
            timestamp: parent.timestamp,
            l1OriginNumber: BigInt(genesis.l1.number),
          },
          transactions: [],
        });
      return blocks;
    }
    const origin = parseL1Info(l1InfoCalldata(transactions), `L2 block ${parent.number} L1-info deposit`).l1BlockNumber;
    if (origin === undefined) return blocks;
    blocks.set(parent.number, {
      ref: { hash: keccak256(bytesToHex(rlp)), number: parent.number, timestamp: parent.timestamp, l1OriginNumber: origin },
      transactions: transactions.map((tx) => hexToBytes(tx)),
    });
    header = parent;
  }
}
