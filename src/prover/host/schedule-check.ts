import { decodeFunctionResult, encodeFunctionData, numberToHex, parseAbi, type Address, type Hex } from 'viem';
import { ServerError } from '../../errors.ts';
import type { CallRpc } from '../../jsonrpc/protocol.ts';
import type { RollupConfig } from '../../op/rollup-config.ts';
import type { ProofResult } from '../enclave-protocol.ts';
import type { ProofRequest } from '../request.ts';
import { l2TimestampOfBlock } from '../schedule-id.ts';

/**
 * The host's check of an enclave's answer against L1: the scheduleId every proposal was signed
 * with must be `ProtocolVersions.activatedScheduleId(t)` (base/contracts `src/L1/ProtocolVersions.sol`
 * @4f7acda5) for the L2 time t of the schedule block, the value an AggregateVerifier game of that
 * claim pins; a proof signed with another is refused by Base's verifier, so the host answers an
 * error instead of it. t comes from the rollup config's genesis as the verifier computes it, else
 * from the L2 node's header of the block.
 */
export const protocolVersionsAbi = parseAbi(['function activatedScheduleId(uint64 l2Timestamp) view returns (bytes32)']);

export interface ScheduleCheckOptions {
  readonly l1: CallRpc;
  readonly l2: CallRpc;
  /** The L1 ProtocolVersions contract (proxy). */
  readonly protocolVersions: Address;
  readonly rollup?: RollupConfig | undefined;
}

export type ScheduleCheck = (request: ProofRequest, result: ProofResult) => Promise<void>;

export function createScheduleCheck(options: ScheduleCheckOptions): ScheduleCheck {
  async function l2Time(block: number): Promise<bigint> {
    const fromGenesis = options.rollup ? l2TimestampOfBlock(options.rollup, block) : undefined;
    if (fromGenesis !== undefined) return fromGenesis;
    const header = (await options.l2('eth_getBlockByNumber', [numberToHex(block), false])) as { timestamp?: string } | null;
    if (!header?.timestamp) throw new ServerError(`scheduleId check: the L2 node has no block ${block}`);
    return BigInt(header.timestamp);
  }
  return async (request, result) => {
    if (result.type !== 'tee') return;
    const block = request.scheduleL2BlockNumber || request.claimedL2BlockNumber;
    const timestamp = await l2Time(block);
    const data = encodeFunctionData({ abi: protocolVersionsAbi, functionName: 'activatedScheduleId', args: [timestamp] });
    const raw = (await options.l1('eth_call', [{ to: options.protocolVersions, data }, 'latest'])) as Hex;
    const pinned = decodeFunctionResult({ abi: protocolVersionsAbi, functionName: 'activatedScheduleId', data: raw });
    for (const proposal of [...result.proposals, result.aggregateProposal]) {
      if (proposal.scheduleId?.toLowerCase() !== pinned.toLowerCase())
        throw new ServerError(
          `scheduleId check: the proposal for L2 block ${proposal.l2BlockNumber} is signed with scheduleId ${proposal.scheduleId ?? 'none'}, L1's ProtocolVersions ${options.protocolVersions} pins ${pinned} at L2 time ${timestamp} (block ${block}); Base's verifier would refuse it`,
        );
    }
  };
}
