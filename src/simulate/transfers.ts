import type { EVM, EVMResult, InterpreterStep, Message } from '@ethereumjs/evm';
import { bytesToHex } from '@ethereumjs/util';
import { padHex, toEventSelector, toHex, type Hex } from 'viem';

/** ERC-7528's address for the native asset: traced ETH transfers are logs "emitted" by it. */
export const NATIVE_ASSET_ADDRESS = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
/** keccak256("Transfer(address,address,uint256)"), the ERC-20 event the transfers are shaped as. */
export const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)');

export interface TracedLog {
  readonly address: Hex;
  readonly topics: Hex[];
  readonly data: Hex;
  /** Block-wide position. */
  readonly logIndex: number;
}

type Entry = { kind: 'log'; index: number } | { kind: 'transfer'; index: number; from: Hex; to: Hex | undefined; value: bigint };

/**
 * eth_simulateV1's `traceTransfers`: every movement of ETH (a call or create with value, a
 * SELFDESTRUCT paying out) becomes an ERC-20 Transfer log from the ERC-7528 address, placed among
 * the call's own logs in the order it happened. A frame that fails takes its transfers (and its
 * logs) with it. Gas fees are not transfers.
 *
 * The call's own logs are known only at the end, so a frame records a placeholder where each LOG
 * ran; `logs(real)` fills the placeholders with the real logs in order.
 *
 * Log indexes come from the block's `counter`, taken as each log or transfer happens, so a log
 * that a failing frame dropped still used its index (what geth answers).
 */
export function createTransferTracer(evm: EVM, counter: { next: number }) {
  const frames: Entry[][] = [];
  let root: Entry[] = [];
  const onMessage = (message: Message) => {
    const entries: Entry[] = [];
    if (message.value > 0n && !message.delegatecall) {
      entries.push({
        kind: 'transfer',
        index: counter.next++,
        from: message.caller.toString() as Hex,
        to: message.to?.toString() as Hex | undefined,
        value: message.value,
      });
    }
    frames.push(entries);
  };
  const onResult = (result: EVMResult) => {
    const entries = frames.pop() ?? [];
    const first = entries[0];
    if (first?.kind === 'transfer' && first.to === undefined && result.createdAddress) first.to = result.createdAddress.toString() as Hex;
    if (result.execResult.exceptionError) return;
    const parent = frames[frames.length - 1];
    if (parent) parent.push(...entries);
    else root = entries;
  };
  const onStep = (step: InterpreterStep) => {
    const frame = frames[frames.length - 1];
    if (!frame) return;
    if (step.opcode.name.startsWith('LOG')) {
      frame.push({ kind: 'log', index: counter.next++ });
    } else if (step.opcode.name === 'SELFDESTRUCT' && step.account.balance > 0n) {
      const beneficiary = padHex(toHex(step.stack[step.stack.length - 1]!), { size: 20 });
      frame.push({
        kind: 'transfer',
        index: counter.next++,
        from: step.address.toString() as Hex,
        to: beneficiary,
        value: step.account.balance,
      });
    }
  };
  evm.events.on('beforeMessage', onMessage);
  evm.events.on('afterMessage', onResult);
  evm.events.on('step', onStep);
  return {
    stop() {
      evm.events.off('beforeMessage', onMessage);
      evm.events.off('afterMessage', onResult);
      evm.events.off('step', onStep);
    },
    /** The call's logs with its transfers in place, given its real logs (`execResult.logs`). */
    logs(real: readonly [Uint8Array, Uint8Array[], Uint8Array][]): TracedLog[] {
      const out: TracedLog[] = [];
      let next = 0;
      const realLog = (i: number, logIndex: number): TracedLog => {
        const [address, topics, data] = real[i]!;
        return {
          address: bytesToHex(address) as Hex,
          topics: topics.map((t) => bytesToHex(t) as Hex),
          data: bytesToHex(data) as Hex,
          logIndex,
        };
      };
      for (const entry of root) {
        if (entry.kind === 'log') {
          if (next < real.length) out.push(realLog(next++, entry.index));
        } else if (entry.to !== undefined) {
          out.push({
            address: NATIVE_ASSET_ADDRESS,
            topics: [TRANSFER_TOPIC, padHex(entry.from, { size: 32 }), padHex(entry.to, { size: 32 })],
            data: padHex(toHex(entry.value), { size: 32 }),
            logIndex: entry.index,
          });
        }
      }
      while (next < real.length) out.push(realLog(next++, counter.next++));
      return out;
    },
  };
}
