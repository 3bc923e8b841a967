import type { Logger } from 'pino';
import { ConfigError } from '../errors.ts';
import { chainIdentityOf, describeChain, sameChain } from '../log/chain-stamp.ts';
import type { ChainIdentity } from '../records/meta.ts';
import { resultOf, type Endpoint } from './endpoint.ts';
import type { CheckerHealth } from './health.ts';

/**
 * The checker compares chains before answers: a gateway wired to a node of another chain (same
 * chain id, another genesis, as two devnets are) would otherwise be judged height by height
 * against blocks it never served. Both sides are asked `eth_chainId` and
 * `eth_getBlockByNumber("0x0")`; the pair names the chain (as the log's chain stamp does).
 */

/** The chain an endpoint serves. Throws, naming the endpoint and the field, on an answer that is not one. */
export async function endpointChain(endpoint: Endpoint): Promise<ChainIdentity> {
  const [idAnswer, genesisAnswer] = await Promise.all([
    endpoint.call('eth_chainId', []),
    endpoint.call('eth_getBlockByNumber', ['0x0', false]),
  ]);
  return chainIdentityOf(
    resultOf<unknown>('eth_chainId', idAnswer),
    resultOf<unknown>('eth_getBlockByNumber', genesisAnswer),
    endpoint.url,
  );
}

/** What the two sides serve. */
export type ChainComparison =
  | { readonly kind: 'same'; readonly chain: ChainIdentity }
  | { readonly kind: 'different'; readonly gateway: ChainIdentity; readonly node: ChainIdentity; readonly message: string };

/** Asks both sides their chain; a transport failure or a malformed answer throws. */
export async function compareChains(gateway: Endpoint, node: Endpoint): Promise<ChainComparison> {
  const [ofGateway, ofNode] = await Promise.all([endpointChain(gateway), endpointChain(node)]);
  if (sameChain(ofGateway, ofNode)) return { kind: 'same', chain: ofNode };
  return { kind: 'different', gateway: ofGateway, node: ofNode, message: chainMismatchMessage(gateway.url, ofGateway, node.url, ofNode) };
}

/** `the gateway http://… serves chain id 1337, genesis 0x…, but the node http://… is chain id 1337, genesis 0x…; …` */
export function chainMismatchMessage(gatewayUrl: string, gateway: ChainIdentity, nodeUrl: string, node: ChainIdentity): string {
  return (
    `the gateway ${gatewayUrl} serves ${describeChain(gateway)}, but the node ${nodeUrl} is ${describeChain(node)}: ` +
    `--node must be the gateway's own upstream`
  );
}

/**
 * A gateway and a node of different chains. A ConfigError, so the CLI prints it as one line and
 * exits 2: the setting to change is --gateway or --node.
 */
export class CheckerChainMismatchError extends ConfigError {
  readonly gateway: ChainIdentity;
  readonly node: ChainIdentity;
  constructor(different: Extract<ChainComparison, { kind: 'different' }>) {
    super(different.message);
    this.name = 'CheckerChainMismatchError';
    this.gateway = different.gateway;
    this.node = different.node;
  }
}

export interface ChainWatchOptions {
  readonly gateway: Endpoint;
  readonly node: Endpoint;
  readonly logger: Logger;
  readonly health: CheckerHealth;
  /** `exit`: a mismatch throws CheckerChainMismatchError; `wait`: it is logged and exported, and checked again until the chains agree. */
  readonly mode: 'exit' | 'wait';
  /** Between two checks while nothing failed (5 s at most while the chains differ). */
  readonly checkEveryMs: number;
  /**
   * What was recorded is of no chain to judge against any more: the two sides differ (`wait`
   * mode), or both now serve another chain than before (restarted as a new chain together).
   */
  readonly onChainChanged: () => void;
}

export interface ChainWatch {
  /** What the last check found. */
  readonly state: 'same' | 'different' | 'unknown';
  /** Whether recording may go on: compares the chains when due, throws when they cannot be asked. */
  hold(): Promise<boolean>;
  /** Compare again before the next poll (after a failure: a reconnect; after the node's head went back). */
  recheck(): void;
}

export function createChainWatch(options: ChainWatchOptions): ChainWatch {
  const { logger, health } = options;
  let state: ChainWatch['state'] = 'unknown';
  /** The chain both sides served at the last check that found one. */
  let agreed: ChainIdentity | undefined;
  /** When the chains were last compared; undefined: compare before the next poll. */
  let checkedAt: number | undefined;
  return {
    get state() {
      return state;
    },
    recheck() {
      checkedAt = undefined;
    },
    async hold() {
      const every = state === 'different' ? Math.min(options.checkEveryMs, 5000) : options.checkEveryMs;
      if (checkedAt !== undefined && Date.now() - checkedAt < every) return state === 'same';
      const comparison = await compareChains(options.gateway, options.node);
      checkedAt = Date.now();
      if (comparison.kind === 'same') {
        if (agreed && !sameChain(agreed, comparison.chain)) {
          logger.warn(
            { before: describeChain(agreed), now: describeChain(comparison.chain) },
            'checker: the gateway and the node both serve another chain than before; what was recorded is dropped',
          );
          options.onChainChanged();
        } else if (state !== 'same')
          logger.info(
            { chain: describeChain(comparison.chain) },
            state === 'different'
              ? 'checker: the gateway and the node serve one chain again'
              : 'checker: the gateway and the node serve one chain',
          );
        state = 'same';
        agreed = comparison.chain;
        health.chains(true);
        return true;
      }
      health.chains(false);
      if (options.mode === 'exit') throw new CheckerChainMismatchError(comparison);
      if (state !== 'different') {
        logger.error(
          { gateway: describeChain(comparison.gateway), node: describeChain(comparison.node) },
          `checker: ${comparison.message}`,
        );
        options.onChainChanged();
      }
      state = 'different';
      return false;
    },
  };
}
