import { describe, expect, it } from 'vitest';
import { ConfigError, ServerError } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { createChainGuard, LogChainMismatchError, stampChain } from './chain-stamp.ts';
import { allTopics } from '../records/topics.ts';
import { createEmbeddedLog } from './embedded/embedded.ts';

/**
 * The check a writer runs while it writes (createChainGuard): the node's chain id and genesis
 * hash against the log's stamp, every time it is asked.
 */
const A = `0x${'a'.repeat(64)}` as const;
const B = `0x${'b'.repeat(64)}` as const;
/** A new log with its topics, as openLog makes it. */
async function newLog() {
  const log = createEmbeddedLog({ path: ':memory:' });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  return log;
}
const place = { description: 'in ./data', remedy: 'give each chain a data directory of its own' };

/** A node whose genesis the test changes (a devnet restarted), or that does not answer. */
function node(genesis: { hash: string; down: boolean }): Upstream {
  return {
    url: 'scripted',
    async call(method) {
      if (genesis.down) throw new ServerError('upstream RPC unreachable: connect ECONNREFUSED', { retryable: true });
      if (method === 'eth_chainId') return '0x539';
      if (method === 'eth_getBlockByNumber') return { hash: genesis.hash };
      throw new Error(`unexpected ${method}`);
    },
  };
}

describe('the chain checked all the time', () => {
  it("passes while the node is the log's chain, and stops with one line naming both once its genesis changes", async () => {
    const log = await newLog();
    try {
      await stampChain(log, { chainId: 1337n, genesisHash: A });
      const genesis = { hash: A, down: false };
      const verify = createChainGuard(log, node(genesis), place, 'the node at http://127.0.0.1:8545');
      await expect(verify()).resolves.toBeUndefined();
      genesis.hash = B;
      const error = await verify().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LogChainMismatchError);
      expect(error).toBeInstanceOf(ConfigError); // the CLI prints it as one line, exit 2
      const message = (error as Error).message;
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toContain(`chain id 1337, genesis ${A}`);
      expect(message).toContain(`chain id 1337, genesis ${B}`);
      expect(message).toContain('the node at http://127.0.0.1:8545 (its chain changed while this writer ran)');
    } finally {
      await log.close();
    }
  });

  it('a node that does not answer is not another chain: the failure is thrown as it is, for the caller to ask again', async () => {
    const log = await newLog();
    try {
      await stampChain(log, { chainId: 1337n, genesisHash: A });
      const verify = createChainGuard(log, node({ hash: A, down: true }), place, 'the node');
      const error = await verify().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServerError);
      expect(error).not.toBeInstanceOf(ConfigError);
    } finally {
      await log.close();
    }
  });

  it('a node that answers without a block 0 (pruned) cannot be checked: it passes, as at start', async () => {
    const log = await newLog();
    try {
      await stampChain(log, { chainId: 1337n, genesisHash: A });
      const pruned: Upstream = { url: 'scripted', call: async (method) => (method === 'eth_chainId' ? '0x539' : null) };
      await expect(createChainGuard(log, pruned, place, 'the node')()).resolves.toBeUndefined();
    } finally {
      await log.close();
    }
  });

  it('a log with no stamp yet: nothing to hold the node against', async () => {
    const log = await newLog();
    try {
      await expect(createChainGuard(log, node({ hash: B, down: false }), place, 'the node')()).resolves.toBeUndefined();
    } finally {
      await log.close();
    }
  });
});
