import { getAddress, type Hex } from 'viem';
import type { CallRpc } from '../jsonrpc/protocol.ts';
import { FlashlogError } from '../errors.ts';
import { messagePasserAddress, outputRootV0 } from './output-root.ts';
import type { ProofRequest } from './request.ts';

/**
 * A `ProofRequest` for an L2 range, read from the chains' own nodes: the agreed block's hash and
 * output root, the claimed block's output root, and an L1 head. Each output root is
 * `outputRootV0(stateRoot, the message passer's storage root, blockHash)`, the storage root from
 * `eth_getProof` (as op-node's `optimism_outputAtBlock` computes it), so any OP Stack node with
 * state for the two blocks serves it.
 *
 * @example
 *   const request = await proofRequestFromChains({ l1, l2 }, { claimedBlock: 8, agreedBlock: 4 });
 */
export interface ProofRequestFromChainsParameters {
  /** The block whose output root is claimed. */
  readonly claimedBlock: number;
  /** The block whose output root is agreed (default: the one before `claimedBlock`). */
  readonly agreedBlock?: number | undefined;
  /**
   * Intermediate output roots every this many blocks in the aggregate proposal (default: the
   * whole range, i.e. none between; the enclave refuses 0 for a range of more than one block).
   */
  readonly intermediateBlockInterval?: number;
}

interface RpcBlock {
  readonly hash: Hex;
  readonly number: Hex;
  readonly stateRoot: Hex;
}

export async function proofRequestFromChains(
  rpc: { readonly l1: CallRpc; readonly l2: CallRpc },
  parameters: ProofRequestFromChainsParameters,
): Promise<ProofRequest> {
  const claimed = parameters.claimedBlock;
  const agreed = parameters.agreedBlock ?? claimed - 1;
  if (!(agreed >= 0 && agreed < claimed))
    throw new FlashlogError('WITNESS_RANGE', `the agreed block (${agreed}) must be below the claimed block (${claimed}) and at least 0`);
  const l2Block = async (number: number): Promise<RpcBlock> => {
    const block = (await rpc.l2('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])) as RpcBlock | null;
    if (!block) throw new FlashlogError('WITNESS_RANGE', `L2 block ${number}: the L2 node has no such block yet`, { retryable: true });
    return block;
  };
  const outputRoot = async (block: RpcBlock): Promise<Hex> => {
    const proof = (await rpc.l2('eth_getProof', [messagePasserAddress, [], block.number])) as { storageHash: Hex };
    return outputRootV0(block.stateRoot, proof.storageHash, block.hash);
  };
  const [agreedBlock, claimedBlock, l1Head] = await Promise.all([
    l2Block(agreed),
    l2Block(claimed),
    rpc.l1('eth_getBlockByNumber', ['latest', false]) as Promise<RpcBlock>,
  ]);
  return {
    l1Head: l1Head.hash,
    l1HeadNumber: Number(BigInt(l1Head.number)),
    agreedL2HeadHash: agreedBlock.hash,
    agreedL2OutputRoot: await outputRoot(agreedBlock),
    claimedL2OutputRoot: await outputRoot(claimedBlock),
    claimedL2BlockNumber: claimed,
    proposer: getAddress(`0x${'00'.repeat(20)}`),
    intermediateBlockInterval: parameters.intermediateBlockInterval ?? claimed - agreed,
    imageHash: `0x${'00'.repeat(32)}`,
  };
}
