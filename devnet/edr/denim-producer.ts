import type { Logger } from 'pino';
import { keccak256, numberToHex, toHex, type Hex } from 'viem';
import { ServerError } from '../../src/errors.ts';
import { baseTimeDeposit } from '../../src/op/basetime.ts';
import { transactionHash } from '../../src/wire/tx-hash.ts';
import { l1AttributesDeposit } from '../deposit.ts';
import type { Engine } from './edr-chain.ts';
import { createTickLoop } from './tick-loop.ts';
import { l1AttributesFor, type Producer } from './producer.ts';

/**
 * The Denim block producer: Base's sequencer after Denim in miniature. Every `blockTimeMs`
 * (200 ms) one complete block, no flashblocks:
 *
 *   tx[0]  the L1-attributes deposit
 *   tx[1]  the BaseTime deposit: -> 0x4200…0030, setTimestampMillisPart(ms % 1000) (baseTimeSender)
 *   tx[2…] queued user deposits, then the mempool (FIFO)
 *
 * Block n's time is `genesisMs + n × blockTimeMs`, from the schedule, never the wall clock; its
 * header `timestamp` is that time's whole seconds, so about five blocks share one.
 *
 * With `reorgEvery` K, the tick after every K-th block replaces it (the unsafe head): the chain is
 * reverted to before the block, which is mined again without its last user transaction (or, with
 * none, with another prevRandao), so the head's hash changes and its withdrawn logs can be seen.
 * The left-out transaction goes back to the mempool for the next block.
 */
export interface DenimBlock {
  readonly number: bigint;
  readonly hash: Hex;
  readonly timestampMs: bigint;
  /** The hash of the block this one replaced at the same height (a reorg), else null. */
  readonly replaced: Hex | null;
}

export interface DenimProducerOptions {
  readonly engine: Engine;
  readonly logger: Logger;
  readonly blockTimeMs: number;
  /** Milliseconds since the epoch of block 0 (the genesis timestamp × 1000). */
  readonly genesisMs: bigint;
  /** 0 = never. */
  readonly reorgEvery: number;
  readonly onBlock: (block: DenimBlock) => void;
  readonly takeDeposits?: () => readonly Hex[];
}

export interface DenimProducer extends Producer {
  /** The time in milliseconds of block `number`, by the schedule. */
  timestampMs(number: bigint): bigint;
  /** The newest block's number. */
  head(): bigint;
}

type Call = <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>;
interface MinedBlock {
  number: Hex;
  hash: Hex;
  transactions: Hex[];
}

/**
 * The `from` of the devnet's BaseTime deposit of block `number`: 0xdeaddeaddeaddeaddeadba5e ||
 * uint64(number). On Base it is the depositor account (0xdead…0001), but EDR refuses a deposit from
 * an account whose nonce is not 0, so each block needs a fresh sender, as the L1-attributes deposit
 * does (deposit.ts). Everything else is Base's deposit, built by the one function the stateless
 * executor's Denim tests build it with (`baseTimeDeposit`, src/op/basetime.ts).
 */
export function baseTimeSender(number: bigint): Hex {
  return `0xdeaddeaddeaddeaddeadba5e${number.toString(16).padStart(16, '0')}`;
}

export function createDenimProducer(options: DenimProducerOptions): DenimProducer {
  const { engine, logger, blockTimeMs, genesisMs } = options;
  const rawByHash = new Map<Hex, Hex>();
  const queuedDeposits: Hex[] = [];
  let stopped = false;
  let head = 0n;
  /** The newest block, when it is to be replaced at the next tick. */
  let toReplace: { number: bigint; hash: Hex; snapshot: Hex; userTxs: Hex[] } | null = null;
  const timestampMsOf = (number: bigint) => genesisMs + number * BigInt(blockTimeMs);

  /** Takes every pending transaction out of the mempool, in order, and returns their raw bytes. */
  async function drain(call: Call): Promise<Hex[]> {
    const raws: Hex[] = [];
    for (const { hash } of await call<{ hash: Hex }[]>('eth_pendingTransactions')) {
      await call('hardhat_dropTransaction', [hash]);
      const raw = rawByHash.get(hash);
      if (raw) raws.push(raw);
    }
    return raws;
  }

  async function send(call: Call, raws: readonly Hex[], what: string): Promise<void> {
    for (const raw of raws) {
      try {
        rawByHash.set(await call<Hex>('eth_sendRawTransaction', [raw]), raw);
      } catch (error) {
        rawByHash.delete(transactionHash(raw));
        logger.warn({ tx: transactionHash(raw), err: (error as Error).message }, `devnet: ${what} refused; it is left out`);
      }
    }
  }

  /** Mines block `number` from the deposits and `userRaws` (in order). */
  async function mineBlock(call: Call, number: bigint, userRaws: readonly Hex[], randaoTag: string): Promise<MinedBlock> {
    const ms = timestampMsOf(number);
    const seconds = ms / 1000n;
    await send(
      call,
      [
        l1AttributesDeposit(l1AttributesFor(number, seconds), number),
        baseTimeDeposit({ blockNumber: number, millisPart: Number(ms % 1000n), from: baseTimeSender(number) }),
      ],
      'a system deposit was',
    );
    await send(call, [...queuedDeposits.splice(0), ...(options.takeDeposits?.() ?? [])], 'a deposit was');
    await send(call, userRaws, 'a transaction was');
    await call('evm_setNextBlockTimestamp', [numberToHex(seconds)]);
    await call('hardhat_setPrevRandao', [keccak256(toHex(`devnet prevRandao ${number}${randaoTag}`))]);
    await call('evm_mine');
    const block = await call<MinedBlock>('eth_getBlockByNumber', [numberToHex(number), false]);
    for (const hash of block.transactions) rawByHash.delete(hash);
    return block;
  }

  async function tick(): Promise<void> {
    await engine.exclusive(async (call) => {
      if (toReplace) {
        const target = toReplace;
        toReplace = null;
        const late = await drain(call);
        await call('evm_revert', [target.snapshot]);
        await drain(call);
        const left = target.userTxs.at(-1);
        const kept = left ? target.userTxs.slice(0, -1) : target.userTxs;
        const mined = await mineBlock(
          call,
          target.number,
          kept.map((hash) => rawByHash.get(hash) ?? '0x').filter((raw) => raw !== '0x'),
          ' replaced',
        );
        head = target.number;
        logger.info(
          { block: target.number, replaced: target.hash, by: mined.hash, left: left ?? null },
          'devnet: reorg, the unsafe head replaced',
        );
        options.onBlock({ number: target.number, hash: mined.hash, timestampMs: timestampMsOf(target.number), replaced: target.hash });
        // What the replacement left out and what arrived meanwhile wait for the next block.
        const back = [...(left ? [rawByHash.get(left)!].filter(Boolean) : []), ...late];
        await send(call, back, 'a transaction could not go back to the mempool and was');
        return;
      }
      const number = head + 1n;
      const pending = await drain(call);
      const snapshot = options.reorgEvery > 0 && number % BigInt(options.reorgEvery) === 0n ? await call<Hex>('evm_snapshot') : null;
      // Raw bytes of the user transactions are kept until the block can no longer be replaced.
      const userRaws = new Map(pending.map((raw) => [transactionHash(raw), raw] as const));
      const mined = await mineBlock(call, number, pending, '');
      head = number;
      options.onBlock({ number, hash: mined.hash, timestampMs: timestampMsOf(number), replaced: null });
      if (snapshot) {
        const userTxs = mined.transactions.filter((hash) => userRaws.has(hash));
        for (const hash of userTxs) rawByHash.set(hash, userRaws.get(hash)!);
        toReplace = { number, hash: mined.hash, snapshot, userTxs };
      }
    });
  }

  const loop = createTickLoop(blockTimeMs, tick, logger, 'block tick');

  return {
    started: loop.started,
    timestampMs: timestampMsOf,
    head: () => head,
    async submit(raw) {
      if (stopped) throw new ServerError('the devnet is stopping');
      return engine.exclusive(async (call) => {
        const hash = await call<Hex>('eth_sendRawTransaction', [raw]);
        rawByHash.set(hash, raw);
        return hash;
      });
    },
    submitDeposit(raw) {
      queuedDeposits.push(raw);
      return transactionHash(raw);
    },
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
