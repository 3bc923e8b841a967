/**
 * Child process of bench/edr-memory.ts: one case in a process of its own (memory is per process,
 * and EDR reads `__EDR_MAX_CACHED_STATES` once, when a provider is made). A bare EDR provider (the
 * devnet's engine) mines `blocks` blocks of `txs` ETH transfers between ten accounts that already
 * exist, so the chain's state itself does not grow, the way the case says:
 *   plain      each block mined once
 *   snapshot   evm_snapshot before each block, evm_revert after it (a trial block: executed, dropped)
 *   devnet     the devnet's pattern: the block so far mined as 4 trial blocks, reverted, then every
 *              transaction sent again and the block mined for good (2 executions per transaction)
 * Reads its own RssAnon (/proc/self/status) after a warm-up of a fifth of the blocks and at the end,
 * and prints one JSON line.
 *   node --expose-gc bench/children/edr-memory.ts <plain|snapshot|devnet> <blocks> <txs>
 */
import { readFileSync } from 'node:fs';
import { type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEngine } from '../../devnet/edr/edr-chain.ts';
import { devnetAccounts, devnetEngineOptions } from '../../devnet/edr/devnet.ts';

const [pattern, blocksArg, txsArg] = process.argv.slice(2) as ['plain' | 'snapshot' | 'devnet', string, string];
const blocks = Number(blocksArg);
const txsPerBlock = Number(txsArg);
const selfAnonMiB = (): number => Number(/^RssAnon:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

const accounts = devnetAccounts();
const engine = await createEngine(devnetEngineOptions(901, accounts, { balance: 10n ** 24n }));
const signers = accounts.map((account) => privateKeyToAccount(account.privateKey));
const nonces = signers.map(() => 0);
let executed = 0;
let next = 0;

function signed(): Promise<Hex> {
  const from = next++ % signers.length;
  return signers[from]!.signTransaction({
    chainId: 901,
    type: 'eip1559',
    to: accounts[(from + 1) % accounts.length]!.address,
    value: 1n,
    gas: 21_000n,
    nonce: nonces[from]!++,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
}

async function block(): Promise<void> {
  const raws: Hex[] = [];
  for (let i = 0; i < txsPerBlock; i++) raws.push(await signed());
  const send = async (some: Hex[]) => {
    for (const raw of some) await engine.call('eth_sendRawTransaction', [raw]);
  };
  if (pattern === 'plain') {
    await send(raws);
    await engine.call('evm_mine');
    executed += raws.length;
  } else if (pattern === 'snapshot') {
    const snapshot = await engine.call<Hex>('evm_snapshot');
    await send(raws);
    await engine.call('evm_mine');
    executed += raws.length;
    await engine.call('evm_revert', [snapshot]);
    // Executed and dropped: the nonces go back.
    for (let i = 0; i < txsPerBlock; i++) nonces[(next - 1 - i) % signers.length]!--;
  } else {
    const snapshot = await engine.call<Hex>('evm_snapshot');
    const quarter = Math.ceil(raws.length / 4);
    for (let start = 0; start < raws.length; start += quarter) {
      await send(raws.slice(start, start + quarter));
      await engine.call('evm_mine');
    }
    await engine.call('evm_revert', [snapshot]);
    await send(raws);
    await engine.call('evm_mine');
    executed += 2 * raws.length;
  }
}

const warmBlocks = Math.ceil(blocks / 5);
for (let i = 0; i < warmBlocks; i++) await block();
globalThis.gc?.();
const warm = { anon: selfAnonMiB(), executed };
const startedMs = performance.now();
for (let i = warmBlocks; i < blocks; i++) await block();
globalThis.gc?.();
const end = { anon: selfAnonMiB(), executed };
process.stdout.write(
  `${JSON.stringify({
    warmMiB: warm.anon,
    endMiB: end.anon,
    executedAfterWarmUp: end.executed - warm.executed,
    miBPerThousandTxs: ((end.anon - warm.anon) / (end.executed - warm.executed)) * 1000,
    txsPerS: ((end.executed - warm.executed) / (performance.now() - startedMs)) * 1000,
  })}\n`,
);
process.exit(0);
