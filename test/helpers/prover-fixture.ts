import { createClient, http, type Hex } from 'viem';
import type { ProofRequest } from '../../src/prover/request.ts';
import type { CallRpc } from '../../src/jsonrpc/protocol.ts';
import { buildHeaderChain, serveHeaderChain, type HeaderChainServer, type TestBlock } from './header-chain.ts';

/** A raw JSON-RPC caller over viem's HTTP transport. */
export function rpcCall(url: string): CallRpc {
  const client = createClient({ transport: http(url, { retryCount: 0 }) });
  return (method, params) => client.request({ method: method as never, params: params as never });
}

/** An L1 and an L2 header chain, each served over JSON-RPC, and requests against them. */
export interface ProverChains {
  readonly l1: HeaderChainServer;
  readonly l2: HeaderChainServer;
  readonly l1Blocks: TestBlock[];
  readonly l2Blocks: TestBlock[];
  request(agreed: number, claimed: number, overrides?: Partial<ProofRequest>): ProofRequest;
  close(): Promise<void>;
}

export async function startProverChains(options: { l2Length?: number; l2ChainId?: number } = {}): Promise<ProverChains> {
  const l1Blocks = buildHeaderChain({ length: 4, seed: 'l1' });
  const l2Blocks = buildHeaderChain({ length: options.l2Length ?? 12, seed: 'l2' });
  const l1 = await serveHeaderChain(l1Blocks, 900);
  const l2 = await serveHeaderChain(l2Blocks, options.l2ChainId ?? 1337);
  return {
    l1,
    l2,
    l1Blocks,
    l2Blocks,
    request(agreed, claimed, overrides = {}) {
      const l1Head = l1Blocks[l1Blocks.length - 1]!;
      return {
        l1Head: l1Head.hash,
        agreedL2HeadHash: l2Blocks[agreed]!.hash,
        agreedL2OutputRoot: l2Blocks[agreed]!.outputRoot,
        claimedL2OutputRoot: l2Blocks[claimed]!.outputRoot,
        claimedL2BlockNumber: claimed,
        proposer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        intermediateBlockInterval: 2,
        l1HeadNumber: l1Head.number,
        imageHash: `0x${'00'.repeat(32)}` as Hex,
        ...overrides,
      };
    },
    async close() {
      await l1.close();
      await l2.close();
    },
  };
}
