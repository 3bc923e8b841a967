import type { Logger } from 'pino';
import { encodeAbiParameters, encodeFunctionData, getContractAddress, keccak256, numberToHex, toHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { DevnetToken, DevnetWorkload } from './contracts/bytecode.ts';
import { encodeDeposit, sourceHash } from '../src/op/deposit-tx.ts';
import type { Engine } from './edr/edr-chain.ts';
import type { Producer } from './edr/producer.ts';

/**
 * The devnet's built-in load: `tps` transactions a second from the ten funded accounts, a mix of
 *
 *   30% ETH transfers (EIP-1559, some legacy and EIP-2930)   25% ERC-20 transfers
 *   15% log-heavy calls (3-12 logs and storage writes)       10% reverting calls
 *    5% contract deployments                                 15% user deposits (type 0x7e)
 *
 * Deposits are queued for index 0 of the next block, as a sequencer includes L1 deposits. Each
 * comes from a fresh account (EDR's mempool refuses a deposit whose sender's nonce is not 0),
 * mints ETH to it and has value 0; half of them call the workload contract, so they log too.
 * At start, account 0 deploys the ERC-20 (DevnetToken) and the workload contract (DevnetWorkload)
 * and hands tokens to the nine others.
 */
export interface LoadOptions {
  /** Reads nonces (eth_getTransactionCount). */
  readonly engine: Pick<Engine, 'call'>;
  /** Takes the signed transactions. */
  readonly producer: Pick<Producer, 'submit'>;
  readonly logger: Logger;
  readonly accounts: readonly { readonly address: Hex; readonly privateKey: Hex }[];
  readonly chainId: number;
  readonly tps: number;
  /** Queue the deposits (default true); without, their share is not sent (a chain whose deposits come from L1). */
  readonly deposits?: boolean;
  /** Seeds the choice of transactions, so two runs send the same mix. */
  readonly seed?: number;
}

export interface Load {
  /** Deployed at start by account 0. */
  readonly token: Hex;
  readonly workload: Hex;
  /** Deposits queued since the last call (the producer calls it when it opens a block). */
  takeDeposits(): Hex[];
  /** Counts of transactions submitted, by kind. */
  counts(): Record<string, number>;
  stop(): Promise<void>;
}

const TICK_MS = 50;
const FEES = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000n } as const;

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A load transaction of `type`, signed: legacy and EIP-2930 pay FEES.maxFeePerGas as their gas price. */
function signLoadTransaction(
  signer: PrivateKeyAccount,
  base: { chainId: number; nonce: number; gas: bigint; value: bigint; data?: Hex; to?: Hex },
  type: 'eip1559' | 'legacy' | 'eip2930',
): Promise<Hex> {
  if (type === 'legacy') return signer.signTransaction({ ...base, type: 'legacy', gasPrice: FEES.maxFeePerGas });
  if (type === 'eip2930')
    return signer.signTransaction({
      ...base,
      type: 'eip2930',
      gasPrice: FEES.maxFeePerGas,
      accessList: base.to ? [{ address: base.to, storageKeys: [] }] : [],
    });
  return signer.signTransaction({ ...base, type: 'eip1559', ...FEES });
}

/** The load's `n`th user deposit: half call the workload contract (two logs), half fund an account. */
function loadDeposit(n: bigint, random: () => number, workload: Hex, accounts: LoadOptions['accounts']): Hex {
  const from = `0x${keccak256(toHex(`devnet deposit ${n}`)).slice(-40)}` as Hex;
  const callsWorkload = random() < 0.5;
  return encodeDeposit({
    sourceHash: sourceHash(0n, keccak256(toHex(`devnet l1 ${n}`)), n),
    from,
    to: callsWorkload ? workload : accounts[Math.floor(random() * accounts.length)]!.address,
    mint: 10n ** 15n * BigInt(1 + Math.floor(random() * 100)),
    value: 0n,
    gas: 300_000n,
    isSystemTx: false,
    data: callsWorkload
      ? encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'emitMany', args: [2n, toHex(`deposit ${n}`)] })
      : '0x',
  });
}

/** What the load sends next, by the workload mix (transfers, ERC-20, logs, reverts, deployments, deposits). */
function nextLoadCall(
  random: () => number,
  other: Hex,
  token: Hex,
  workload: Hex,
): 'deposit' | { kind: string; request: { to?: Hex; data?: Hex; value?: bigint; gas: bigint }; type?: 'eip1559' | 'legacy' | 'eip2930' } {
  const roll = random();
  if (roll < 0.3) {
    const type = random() < 0.2 ? 'legacy' : random() < 0.1 ? 'eip2930' : 'eip1559';
    // An EIP-2930 transfer lists the recipient: 2,400 gas more.
    return {
      kind: 'transfer',
      request: { to: other, value: BigInt(1 + Math.floor(random() * 1e9)), gas: type === 'eip2930' ? 23_400n : 21_000n },
      type,
    };
  }
  if (roll < 0.55) {
    const args = [other, BigInt(1 + Math.floor(random() * 1e6))] as const;
    return {
      kind: 'erc20',
      request: { to: token, data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'transfer', args }), gas: 80_000n },
    };
  }
  if (roll < 0.7) {
    const count = 3 + Math.floor(random() * 10);
    const args = [BigInt(count), numberToHex(Math.floor(random() * 2 ** 32), { size: 32 })] as const;
    const data = encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'emitMany', args });
    return { kind: 'logs', request: { to: workload, data, gas: 60_000n + 40_000n * BigInt(count) } };
  }
  if (roll < 0.8) {
    const data = encodeFunctionData({ abi: DevnetWorkload.abi, functionName: 'failWith', args: ['devnet: reverted on purpose'] });
    return { kind: 'revert', request: { to: workload, data, gas: 100_000n } };
  }
  if (roll < 0.85) return { kind: 'deploy', request: { data: DevnetWorkload.bytecode, gas: 1_500_000n } };
  return 'deposit';
}

export async function startLoad(options: LoadOptions): Promise<Load> {
  const { engine, producer, logger, chainId } = options;
  const random = prng(options.seed ?? 1337);
  const signers: PrivateKeyAccount[] = options.accounts.map((account) => privateKeyToAccount(account.privateKey));
  const nonces = new Map<Hex, number>();
  for (const signer of signers) {
    nonces.set(signer.address, Number(await engine.call<Hex>('eth_getTransactionCount', [signer.address, 'pending'])));
  }
  const counts: Record<string, number> = {};
  const deposits: Hex[] = [];
  let depositCount = 0n;

  const deployer = signers[0]!;
  const token = getContractAddress({ from: deployer.address, nonce: BigInt(nonces.get(deployer.address)!) });
  const workload = getContractAddress({ from: deployer.address, nonce: BigInt(nonces.get(deployer.address)! + 1) });

  async function send(
    kind: string,
    signer: PrivateKeyAccount,
    request: { to?: Hex; data?: Hex; value?: bigint; gas: bigint },
    type: 'eip1559' | 'legacy' | 'eip2930' = 'eip1559',
  ): Promise<void> {
    const nonce = nonces.get(signer.address)!;
    const base = {
      chainId,
      nonce,
      gas: request.gas,
      value: request.value ?? 0n,
      data: request.data,
      ...(request.to ? { to: request.to } : {}),
    };
    const raw = await signLoadTransaction(signer, base, type);
    nonces.set(signer.address, nonce + 1);
    // Not awaited here: the engine queue keeps submission order, so a tick's transactions go in
    // while a flashblock is being built instead of one at a time behind it. `settle` awaits them.
    inFlight.push(
      producer.submit(raw).then(
        () => {
          counts[kind] = (counts[kind] ?? 0) + 1;
        },
        async (error: unknown) => {
          // Resynchronise this account's nonce with the node, then carry on.
          logger.warn({ kind, from: signer.address, nonce, err: (error as Error).message }, 'devnet load: a transaction was refused');
          nonces.set(signer.address, Number(await engine.call<Hex>('eth_getTransactionCount', [signer.address, 'pending'])));
        },
      ),
    );
  }

  let inFlight: Promise<void>[] = [];
  async function settle(): Promise<void> {
    const pending = inFlight;
    inFlight = [];
    await Promise.all(pending);
  }

  function deposit(): void {
    depositCount += 1n;
    deposits.push(loadDeposit(depositCount, random, workload, options.accounts));
    counts.deposit = (counts.deposit ?? 0) + 1;
  }

  // Start: the two contracts, then tokens for everyone.
  await send('deploy', deployer, {
    data: `${DevnetToken.bytecode}${encodeAbiParameters([{ type: 'uint256' }], [10n ** 27n]).slice(2)}` as Hex,
    gas: 1_500_000n,
  });
  await send('deploy', deployer, { data: DevnetWorkload.bytecode, gas: 1_500_000n });
  for (const signer of signers.slice(1)) {
    await send('erc20', deployer, {
      to: token,
      data: encodeFunctionData({ abi: DevnetToken.abi, functionName: 'transfer', args: [signer.address, 10n ** 24n] }),
      gas: 80_000n,
    });
  }
  await settle();

  let next = 0;
  async function one(): Promise<void> {
    const signer = signers[next++ % signers.length]!;
    const other = signers[Math.floor(random() * signers.length)]!;
    const call = nextLoadCall(random, other.address, token, workload);
    if (call === 'deposit') {
      if (options.deposits ?? true) deposit();
    } else await send(call.kind, signer, call.request, call.type);
  }

  let stopped = false;
  let owed = 0;
  let lastTick = performance.now();
  let loop: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = undefined;
    loop = (async () => {
      const now = performance.now();
      // Owed by the clock, not by the tick count: a slow tick is caught up by the next.
      owed = Math.min(owed + (options.tps * (now - lastTick)) / 1000, options.tps);
      lastTick = now;
      while (owed >= 1 && !stopped) {
        owed -= 1;
        await one();
      }
      await settle();
    })()
      .catch((error: unknown) => logger.error({ err: error }, 'devnet load: tick failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, TICK_MS);
      });
  };
  timer = setTimeout(tick, TICK_MS);
  logger.info({ tps: options.tps, token, workload }, 'devnet load generator started');

  return {
    token,
    workload,
    takeDeposits: () => deposits.splice(0),
    counts: () => ({ ...counts }),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await loop;
    },
  };
}

/** The rate `--reorg-every` gets when `--load` is 0. */
const reorgLoadTps = 10;

/**
 * The load generator's rate for the devnet's settings: `--load`, except that `--reorg-every` with
 * no load sends {@link reorgLoadTps}, since a reorg withdraws the replaced block's last
 * pre-confirmed transaction and blocks holding deposits only would give it nothing to withdraw.
 * Used by `devnet` and `run --devnet` alike.
 *
 * @example devnetLoadTps({ load: 0, reorgEvery: 5 }) // 10
 */
export function devnetLoadTps(settings: { readonly load: number; readonly reorgEvery: number }): number {
  return settings.reorgEvery && settings.load === 0 ? reorgLoadTps : settings.load;
}
