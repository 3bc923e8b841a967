/**
 * `node scripts/edr-memory.ts [--blocks N] [--txs M] [--only case,...]`: where a bare EDR provider
 * (the devnet's engine, devnet/edr/edr-chain.ts) keeps native memory, one suspect at a time. Each
 * case runs in a child process of its own (memory is per process, and EDR reads
 * `__EDR_MAX_CACHED_STATES` once, when a provider is made) and mines N blocks of M ETH transfers
 * between ten accounts that already exist, so the chain's state itself does not grow. The child
 * reads its own RssAnon (/proc/self/status) after a warm-up of a fifth of the blocks and at the end
 * and prints the growth in MB per 1,000 transactions executed.
 *
 *   plain          mine each block once (no snapshot)
 *   snapshot       evm_snapshot before each block and evm_revert to it after (the block is
 *                  executed, then dropped): what a reverted trial block costs
 *   devnet         the devnet's pattern (block-building.ts): snapshot at the parent, mine the block
 *                  so far as 4 trial blocks, revert, send every transaction again, mine it for good
 *   <case>         with the devnet's bound on EDR's block state cache (DEVNET_MAX_CACHED_STATES, set
 *                  in-process by createEngine)
 *   <case>-edr     with EDR's default bound (100,000 states: in effect none), as before the fix
 *   <case>-16      with a bound of 16 states
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEngine, type Engine } from '../devnet/edr/edr-chain.ts';
import { devnetAccounts, devnetEngineOptions } from '../devnet/edr/devnet.ts';
import { selfAnonMiB } from './sample-process.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '300' },
    txs: { type: 'string', default: '20' },
    only: { type: 'string' },
    case: { type: 'string' },
  },
});
const blocks = Number(values.blocks);
const txsPerBlock = Number(values.txs);

const cases = ['plain-edr', 'plain', 'plain-16', 'snapshot-edr', 'snapshot', 'devnet-edr', 'devnet', 'devnet-16'] as const;
type Case = (typeof cases)[number];

async function child(name: Case): Promise<void> {
  const accounts = devnetAccounts();
  const engine: Engine = await createEngine(devnetEngineOptions(901, accounts, { balance: 10n ** 24n }));
  const signers = accounts.map((account) => privateKeyToAccount(account.privateKey));
  const nonces = signers.map(() => 0);
  let executed = 0;
  let next = 0;

  async function signed(): Promise<Hex> {
    const from = next++ % signers.length;
    const to = accounts[(from + 1) % accounts.length]!.address;
    return signers[from]!.signTransaction({
      chainId: 901,
      type: 'eip1559',
      to,
      value: 1n,
      gas: 21_000n,
      nonce: nonces[from]!++,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
  }

  const mine = async (): Promise<void> => {
    await engine.call('evm_mine');
  };

  async function block(): Promise<void> {
    const raws: Hex[] = [];
    for (let i = 0; i < txsPerBlock; i++) raws.push(await signed());
    if (name.startsWith('plain')) {
      for (const raw of raws) await engine.call('eth_sendRawTransaction', [raw]);
      await mine();
      executed += raws.length;
    } else if (name.startsWith('snapshot')) {
      // Executed and dropped: the nonces go back.
      const snapshot = await engine.call<Hex>('evm_snapshot');
      for (const raw of raws) await engine.call('eth_sendRawTransaction', [raw]);
      await mine();
      executed += raws.length;
      await engine.call('evm_revert', [snapshot]);
      for (let i = 0; i < txsPerBlock; i++) nonces[(next - 1 - i) % signers.length]!--;
    } else {
      const snapshot = await engine.call<Hex>('evm_snapshot');
      const quarter = Math.ceil(raws.length / 4);
      for (let start = 0; start < raws.length; start += quarter) {
        for (const raw of raws.slice(start, start + quarter)) await engine.call('eth_sendRawTransaction', [raw]);
        await mine();
      }
      await engine.call('evm_revert', [snapshot]);
      for (const raw of raws) await engine.call('eth_sendRawTransaction', [raw]);
      await mine();
      executed += 2 * raws.length;
    }
  }

  const warmBlocks = Math.ceil(blocks / 5);
  for (let i = 0; i < warmBlocks; i++) await block();
  globalThis.gc?.();
  const warm = { anon: selfAnonMiB(), executed };
  const startedMs = Date.now();
  for (let i = warmBlocks; i < blocks; i++) await block();
  globalThis.gc?.();
  const end = { anon: selfAnonMiB(), executed };
  const perThousand = ((end.anon - warm.anon) / (end.executed - warm.executed)) * 1000;
  process.stdout.write(
    JSON.stringify({
      case: name,
      warmMiB: warm.anon,
      endMiB: end.anon,
      executedAfterWarmUp: end.executed - warm.executed,
      miBPerThousandTxs: perThousand,
      txsPerS: ((end.executed - warm.executed) / (Date.now() - startedMs)) * 1000,
    }) + '\n',
  );
}

if (values.case) {
  await child(values.case as Case);
  process.exit(0);
}

const chosen = values.only ? (values.only.split(',') as Case[]) : cases;
const script = fileURLToPath(import.meta.url);
process.stdout.write(`${blocks} blocks of ${txsPerBlock} transfers; RssAnon growth after a warm-up of ${Math.ceil(blocks / 5)} blocks\n`);
process.stdout.write('| case | RssAnon after warm-up / end | MiB per 1,000 txs executed | txs/s |\n| --- | --- | --- | --- |\n');
for (const name of chosen) {
  const env = { ...process.env };
  if (name.endsWith('-16')) env.__EDR_MAX_CACHED_STATES = '16';
  else if (name.endsWith('-edr')) env.__EDR_MAX_CACHED_STATES = '100000';
  else delete env.__EDR_MAX_CACHED_STATES;
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', script, '--case', name, '--blocks', String(blocks), '--txs', String(txsPerBlock)],
    {
      env,
      encoding: 'utf8',
    },
  );
  const row = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>;
  process.stdout.write(
    `| ${name} | ${row.warmMiB!.toFixed(0)} / ${row.endMiB!.toFixed(0)} MiB | ${row.miBPerThousandTxs!.toFixed(2)} | ${row.txsPerS!.toFixed(0)} |\n`,
  );
}
