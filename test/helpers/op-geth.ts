import { type Hex } from 'viem';
import { startOpGethNode, engineClient, type OpGethNode } from '../../devnet/op-geth/node.ts';
import { tempDir } from './context.ts';

export {
  engineClient,
  engineJwt,
  type EngineClient,
  type OpGethNode,
  type OpPayloadAttributes,
  type PayloadStatus,
} from '../../devnet/op-geth/node.ts';

/**
 * op-geth (test/go/build.sh) as the OP Stack oracle (devnet/op-geth/node.ts) in a temporary
 * data dir, removed on close.
 *
 * @example const node = await startOpGeth(goPrograms().opGeth, genesis)
 */
export async function startOpGeth(binary: string, genesis: unknown): Promise<OpGethNode> {
  const dir = tempDir('flashlog-op-geth-');
  return startOpGethNode({ binary, dataDir: dir.path, genesis, onClose: () => dir.remove() });
}

/** A block of test/fixtures/op-geth as the replay needs it (the op-blocks fixture format). */
export interface OracleFixture {
  readonly blockNumber: number;
  readonly payload: {
    readonly timestamp: Hex;
    readonly prevRandao: Hex;
    readonly feeRecipient: Hex;
    readonly parentBeaconBlockRoot: Hex;
    readonly gasLimit: Hex;
    readonly eip1559Params: Hex;
    readonly minBaseFee: Hex | null;
    readonly transactions: readonly Hex[];
  };
  readonly expected: { readonly blockHash: Hex };
}

/**
 * Has op-geth build the fixtures' chain again from their payload attributes (every transaction
 * forced, no pool), import it and make it canonical; throws unless each block gets the fixture's
 * hash and is VALID.
 */
export async function replayOracleChain(node: OpGethNode, fixtures: readonly OracleFixture[]): Promise<void> {
  const engine = engineClient(node);
  let head = (await node.rpc<{ hash: Hex }>('eth_getBlockByNumber', ['0x0', false])).hash;
  for (const { blockNumber, payload, expected } of fixtures) {
    const id = await engine.startBuilding(head, {
      timestamp: payload.timestamp,
      prevRandao: payload.prevRandao,
      suggestedFeeRecipient: payload.feeRecipient,
      withdrawals: [],
      parentBeaconBlockRoot: payload.parentBeaconBlockRoot,
      transactions: payload.transactions,
      noTxPool: true,
      gasLimit: payload.gasLimit,
      eip1559Params: payload.eip1559Params,
      minBaseFee: payload.minBaseFee === null ? undefined : Number(BigInt(payload.minBaseFee)),
    });
    const built = await engine.getPayload(id);
    if (built.blockHash !== expected.blockHash)
      throw new Error(`op-geth rebuilt block ${blockNumber} as ${built.blockHash}, the fixture says ${expected.blockHash}`);
    const status = await engine.newPayload(built, payload.parentBeaconBlockRoot);
    if (status.status !== 'VALID') throw new Error(`engine_newPayloadV4 of block ${blockNumber}: ${JSON.stringify(status)}`);
    const headStatus = await engine.setHead(built.blockHash);
    if (headStatus.status !== 'VALID') throw new Error(`engine_forkchoiceUpdatedV3 to block ${blockNumber}: ${JSON.stringify(headStatus)}`);
    head = built.blockHash;
  }
}
