import { decodeFunctionData, encodeFunctionResult, type Address, type Hex } from 'viem';
import { describe, expect, it, vi } from 'vitest';
import type { CallRpc } from '../../jsonrpc/protocol.ts';
import type { ProofResult, Proposal } from '../enclave-protocol.ts';
import type { ProofRequest } from '../request.ts';
import { activatedScheduleId } from '../schedule-id.ts';
import { createScheduleCheck, protocolVersionsAbi } from './schedule-check.ts';

/** A fake L1 whose ProtocolVersions holds `timestamps` (answers activatedScheduleId by the contract's rule), and a fake L2. */
const registry: Address = '0x00000000000000000000000000000000000000aa';
const timestamps = [100n, 200n, 0n, 300n];
const l1: CallRpc = vi.fn(async (method, params) => {
  expect(method).toBe('eth_call');
  const [call] = params as [{ to: Address; data: Hex }];
  expect(call.to).toBe(registry);
  const { args } = decodeFunctionData({ abi: protocolVersionsAbi, data: call.data });
  return encodeFunctionResult({
    abi: protocolVersionsAbi,
    functionName: 'activatedScheduleId',
    result: activatedScheduleId(timestamps, args[0]),
  });
});
const l2: CallRpc = vi.fn(async (method, params) => {
  expect(method).toBe('eth_getBlockByNumber');
  return { timestamp: `0x${(BigInt(params[0] as string) * 10n).toString(16)}` }; // block n at t = 10·n
});
const request = { claimedL2BlockNumber: 25 } as ProofRequest;
const proposal = (scheduleId: Hex | undefined): Proposal =>
  ({
    outputRoot: '0x',
    signature: '0x',
    l1OriginHash: '0x',
    l1OriginNumber: 1,
    l2BlockNumber: 25,
    prevOutputRoot: '0x',
    configHash: '0x',
    scheduleId,
  }) as Proposal;
const result = (scheduleId: Hex | undefined): ProofResult => ({
  type: 'tee',
  aggregateProposal: proposal(scheduleId),
  proposals: [proposal(scheduleId)],
});

describe('the host checks an enclave answer against L1 ProtocolVersions', () => {
  const check = createScheduleCheck({ l1, l2, protocolVersions: registry });

  it("passes a proof signed with activatedScheduleId at the claim's L2 time (block 25 at t = 250: upgrades 0 and 1)", async () => {
    await expect(check(request, result(activatedScheduleId(timestamps, 250n)))).resolves.toBeUndefined();
  });

  it('refuses one signed with another scheduleId, naming both and the L2 time', async () => {
    const other = activatedScheduleId(timestamps, 300n);
    await expect(check(request, result(other))).rejects.toThrow(
      new RegExp(
        `signed with scheduleId ${other}, L1's ProtocolVersions ${registry} pins ${activatedScheduleId(timestamps, 250n)} at L2 time 250`,
      ),
    );
    await expect(check(request, result(undefined))).rejects.toThrow(/signed with scheduleId none/);
  });

  it("pins at the request's schedule block when it names one (block 30 at t = 300: upgrade 3 too)", async () => {
    const later = { ...request, scheduleL2BlockNumber: 30 };
    await expect(check(later, result(activatedScheduleId(timestamps, 300n)))).resolves.toBeUndefined();
    await expect(check(later, result(activatedScheduleId(timestamps, 250n)))).rejects.toThrow(/at L2 time 300 \(block 30\)/);
  });
});
