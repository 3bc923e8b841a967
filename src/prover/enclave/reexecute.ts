import { keccak256, type Hex } from 'viem';
import { errorMessage } from '../../errors.ts';
import { attributesFromExtraData } from '../../op/base-fee.ts';
import { compareHeaders } from '../../evm/op/compare.ts';
import { executeBlock, type PayloadAttributes } from '../../evm/op/execute-block.ts';
import { decodeHeaderRlp, type BlockHeader } from '../../op/header.ts';
import type { RollupConfig } from '../../op/rollup-config.ts';
import { crossChainMessagesIn } from '../../evm/op/interop.ts';
import { readOrderedTrie, WitnessIncompleteError, type Witness } from '../../evm/op/witness-state.ts';
import { EnclaveRefusal } from './refusal.ts';

/** One L2 block re-executed by the enclave: its output root's inputs, from the re-execution. */
export interface ReexecutedBlock {
  readonly number: number;
  readonly hash: Hex;
  readonly stateRoot: Hex;
  readonly messagePasserStorageRoot: Hex;
}

/**
 * Re-executes the L2 block whose header RLP is `rlp` (already linked to `parentRlp` by hash) from
 * the request's preimages, its state from the parent's stateRoot. Its payload attributes are the
 * ones derived from L1 when given (the `derive` check), else its own header's fields and the
 * transactions under its transactionsRoot (the `reexecute` check). The rebuilt header must hash
 * to the block's hash.
 *
 * Lagoon turns on interop: a block that executes a cross-chain message (src/evm/op/interop.ts) is
 * refused by name, since its validity depends on another chain this enclave does not read.
 */
export async function reexecuteBlock(
  config: RollupConfig,
  parentRlp: Hex,
  rlp: Hex,
  witness: Witness,
  /** The attributes derived from L1 (derive-range.ts); without them, the header's own. */
  derived?: PayloadAttributes,
): Promise<ReexecutedBlock> {
  const parent = decodeHeaderRlp(parentRlp, 'parent header');
  const header: BlockHeader = decodeHeaderRlp(rlp, 'header');
  const hash = keccak256(rlp);
  const number = Number(header.number);
  try {
    const attributes = derived ?? (await attributesOfHeader(header, witness));
    const executed = await executeBlock({ config, parent, witness, attributes });
    if (executed.hash !== hash) {
      const differing = compareHeaders(executed.header, header).differing;
      throw new EnclaveRefusal(
        `L2 block ${number}: re-execution gives block hash ${executed.hash}, the chain's is ${hash} (differing: ${differing.join(', ') || 'none'})`,
      );
    }
    const messages = executed.rules.active('lagoon') ? crossChainMessagesIn(attributes.transactions, executed.receipts) : [];
    if (messages.length)
      throw new EnclaveRefusal(
        `L2 block ${number}: ${messages.map((m) => `transaction ${m.index} executes a cross-chain message (CrossL2Inbox ${m.by})`).join('; ')}: interop messages are not proven here (their initiating logs are on another chain)`,
      );
    return { number, hash, stateRoot: executed.header.stateRoot, messagePasserStorageRoot: await executed.messagePasserStorageRoot() };
  } catch (error) {
    if (error instanceof EnclaveRefusal) throw error;
    if (error instanceof WitnessIncompleteError) throw new EnclaveRefusal(`L2 block ${number}: ${error.message}`);
    throw new EnclaveRefusal(`L2 block ${number}: re-execution failed: ${errorMessage(error)}`);
  }
}

/** Local mode's attributes when nothing is derived: the header's own fields and its transactions. */
async function attributesOfHeader(header: BlockHeader, witness: Witness): Promise<PayloadAttributes> {
  const transactions = await readOrderedTrie(witness, header.transactionsRoot, `L2 block ${header.number} transaction`);
  const { eip1559Params, minBaseFee } = attributesFromExtraData(header.extraData);
  return {
    timestamp: header.timestamp,
    prevRandao: header.mixHash,
    feeRecipient: header.miner,
    gasLimit: header.gasLimit,
    parentBeaconBlockRoot: header.parentBeaconBlockRoot,
    eip1559Params,
    minBaseFee: minBaseFee === null ? undefined : BigInt(minBaseFee),
    transactions,
  };
}
