import { Common, Hardfork, Mainnet, createCommonFromGethGenesis, type GethGenesis } from '@ethereumjs/common';
import { FlashlogError } from '../errors.ts';
import { customCrypto, rip7212 } from '../evm/ethereumjs.ts';
import type { RollupConfig } from '../op/rollup-config.ts';
import { rollupConfigOfChain, rollupConfigOfGenesis } from './op-fees.ts';

/**
 * The rules simulated blocks run under: an ethereumjs Common, and whether its hardfork follows the
 * block number and time (`scheduled`, a chain described by a geth genesis file) or stays fixed.
 */
export interface ChainRules {
  readonly common: Common;
  readonly scheduled: boolean;
  /** Precompiles beyond the hardfork's own (address -> ethereumjs precompile function). */
  readonly precompiles?: ReadonlyMap<string, unknown>;
  /** An OP Stack chain's rollup config: its calls pay the L1 and operator fees (op-fees.ts). */
  readonly rollup?: RollupConfig | undefined;
}

const P256VERIFY = '0x0000000000000000000000000000000000000100';

/**
 * The rules of an OP Stack chain known only by its ID (flashlog's chains: Base, the devnet): one
 * fixed Ethereum hardfork for every simulated block (Isthmus runs Prague's EVM), plus RIP-7212's
 * P256VERIFY at 0x100 from Prague on (where EIP-7951 is not active: Osaka's 6,900-gas version
 * then serves it). A chain whose rollup config flashlog knows (src/op/chains.ts) also
 * charges the OP fees by its fork schedule.
 *
 * @example fixedRules(8453n, 'prague')
 */
export function fixedRules(chainId: bigint, hardfork: string = Hardfork.Prague): ChainRules {
  const common = new Common({
    chain: { ...Mainnet, chainId: Number(chainId), name: `chain-${chainId}` },
    hardfork,
    customCrypto: customCrypto(),
  });
  // Prague's EVM runs on OP Stack chains only since Isthmus, well after Fjord brought RIP-7212.
  const p256 = common.gteHardfork(Hardfork.Prague) && !common.isActivatedEIP(7951);
  return { common, scheduled: false, precompiles: new Map(p256 ? [[P256VERIFY, rip7212]] : []), rollup: rollupConfigOfChain(chainId) };
}

type BlobSchedule = Record<string, { target: number; max: number; baseFeeUpdateFraction: number }>;

/**
 * The rules of a chain described by a geth genesis file (`config` with its fork blocks and times).
 *
 * ethereumjs 10.1.3 reads a BPO fork's blob schedule from the params `target`/`max`, but its
 * geth-genesis parser replaces that fork's params with `targetBlobGasPerBlock`/… and execution at
 * a BPO block then fails with "Missing parameter value for target". So BPO forks keep ethereumjs's
 * built-in schedule, and a genesis asking for another one is refused.
 */
export function genesisRules(genesis: GethGenesis & { config: { blobSchedule?: BlobSchedule; fjordTime?: number } }): ChainRules {
  const { blobSchedule = {} } = genesis.config;
  const bpo = Object.fromEntries(Object.entries(blobSchedule).filter(([fork]) => /^bpo\d+$/.test(fork)));
  const rest = Object.fromEntries(Object.entries(blobSchedule).filter(([fork]) => !(fork in bpo)));
  const common = createCommonFromGethGenesis({ ...genesis, config: { ...genesis.config, blobSchedule: rest } } as GethGenesis, {
    chain: 'genesis',
    customCrypto: customCrypto(),
  });
  for (const [fork, schedule] of Object.entries(bpo)) {
    const atFork = common.copy();
    atFork.setHardfork(fork);
    const builtIn = [atFork.param('target'), atFork.param('max'), atFork.param('blobGasPriceUpdateFraction')].join();
    const wanted = [schedule.target, schedule.max, schedule.baseFeeUpdateFraction].map(BigInt).join();
    if (builtIn !== wanted)
      throw new FlashlogError(
        'FORK_UNSUPPORTED',
        `genesis ${fork} blob schedule ${wanted} differs from the one ethereumjs knows (${builtIn})`,
      );
  }
  // An OP Stack genesis (fjordTime set) has RIP-7212's P256VERIFY, from Fjord on: simulated
  // blocks are far past it, so it is served for every block.
  const p256 = genesis.config.fjordTime !== undefined && !common.isActivatedEIP(7951);
  const rollup = rollupConfigOfGenesis(genesis.config as unknown as Record<string, unknown>);
  return { common, scheduled: true, precompiles: new Map(p256 ? [[P256VERIFY, rip7212]] : []), rollup };
}

/**
 * What a worker thread needs to build the rules itself (a Common does not cross threads): a
 * genesis file, or a chain ID and a hardfork.
 */
export type RulesSpec = { readonly genesis: string } | { readonly chainId: bigint; readonly hardfork: string };

export async function loadRules(spec: RulesSpec): Promise<ChainRules> {
  if ('genesis' in spec) {
    const { readFile } = await import('node:fs/promises');
    return genesisRules(JSON.parse(await readFile(spec.genesis, 'utf8')));
  }
  return fixedRules(spec.chainId, spec.hardfork);
}
