import { concat, hexToBytes, keccak256, numberToHex, type Hex } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../../errors.ts';
import { orderedTrieNodes } from '../../evm/receipts.ts';
import { collectBlockWitness, rawTransactions } from './witness-rpc.ts';
import { bootKeys, isthmusTime, type EnclaveCheck } from '../boot-info.ts';
import { headerRlpFromRpc, rpcHeaderSchema, type RpcHeader } from '../header-preimage.ts';
import { messagePasserAddress } from '../output-root.ts';
import { digestKey, localKey, type Preimage } from '../enclave-protocol.ts';
import type { ProofRequest } from '../request.ts';
import type { CallRpc } from '../../jsonrpc/protocol.ts';
import { derivationL1From, derivationL1Witness, type DerivationSources, type L1Witness } from './l1-witness.ts';
import { priorL2Blocks } from './prior-l2.ts';

/** Raw JSON-RPC: the method's result as JSON, or a thrown error naming the endpoint. */

export interface WitnessSources {
  readonly l1: CallRpc;
  readonly l2: CallRpc;
  readonly l2ChainId: number;
  /** Blocks fetched at once. */
  readonly concurrency?: number;
  /**
   * `reexecute` (the default): also each block's execution witness (state and storage trie
   * nodes, code) and its transactions trie, so the enclave can re-execute it. `headers`: only
   * what a header-only check needs.
   */
  readonly check?: EnclaveCheck;
  /** The rollup config JSON for a chain the enclave does not know by id (boot local key 6). */
  readonly rollupConfigJson?: string;
  /**
   * Also the L1 that derivation reads (l1-witness.ts): headers, transaction and receipt tries and
   * inbox blobs from the L1 head back to the agreed block's L1 origin less the channel timeout.
   */
  readonly derivation?: DerivationSources;
  /** Told the derivation preimages with their counts and bytes, for the host's report. */
  readonly onDerivationWitness?: (witness: L1Witness) => void;
  readonly signal?: AbortSignal;
}

const proofSchema = z.object({
  storageHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  accountProof: z.array(z.string().regex(/^0x[0-9a-fA-F]*$/)),
});

/**
 * Collects the hash-keyed preimages local mode needs for one request, walking the L1 and L2 RPCs:
 *   - the L1 head header (keccak-keyed RLP)
 *   - the L2 headers from the agreed head to the claimed block (keccak-keyed RLP), parent-linked
 *   - the message-passer account proof (state-trie nodes) for blocks whose header predates Isthmus
 *   - the agreed output root's 128-byte preimage
 *   - the boot local keys 1-5 and 8-10
 *   - with `derivation`, the L1 derivation reads (l1-witness.ts `derivationL1Witness`)
 * Each header is rebuilt from its JSON fields and must hash to the block hash, or the request fails.
 */
export async function collectWitness(request: ProofRequest, sources: WitnessSources): Promise<Preimage[]> {
  const preimages = new Map<Hex, Preimage>();
  const addKeccak = (value: Hex) => {
    const hash = keccak256(value);
    preimages.set(hash, { key: digestKey('keccak256', hash), value: hexToBytes(value) });
  };
  const header = async (rpc: CallRpc, method: string, param: Hex, chain: string): Promise<RpcHeader | undefined> => {
    if (sources.signal?.aborted) throw new FlashlogError('WITNESS_ABORTED', 'witness collection aborted');
    const raw = await rpc(method, [param, false]);
    if (raw === null || raw === undefined) return undefined;
    const parsed = rpcHeaderSchema.safeParse(raw);
    if (!parsed.success)
      throw new FlashlogError(
        'WITNESS_RPC',
        `${chain} ${method}(${param}): ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`,
      );
    return parsed.data;
  };
  const l1Head = await header(sources.l1, 'eth_getBlockByHash', request.l1Head, 'L1');
  if (!l1Head) throw new FlashlogError('WITNESS_MISSING', `L1 head ${request.l1Head} not found on the L1 RPC`);
  addKeccak(headerRlpFromRpc(l1Head, `L1 head ${request.l1Head}`));

  const agreed = await header(sources.l2, 'eth_getBlockByHash', request.agreedL2HeadHash, 'L2');
  if (!agreed) throw new FlashlogError('WITNESS_MISSING', `agreed L2 head ${request.agreedL2HeadHash} not found on the L2 RPC`);
  const agreedNumber = Number(BigInt(agreed.number));
  if (request.claimedL2BlockNumber <= agreedNumber) {
    throw new FlashlogError(
      'WITNESS_RANGE',
      `claimed L2 block ${request.claimedL2BlockNumber} is not after the agreed L2 head ${agreedNumber}`,
    );
  }
  const isthmus = isthmusTime.get(sources.l2ChainId);
  const storageRootOf = async (block: RpcHeader): Promise<Hex> => {
    if (isthmus !== undefined && Number(BigInt(block.timestamp)) >= isthmus && block.withdrawalsRoot) return block.withdrawalsRoot as Hex;
    const raw = await sources.l2('eth_getProof', [messagePasserAddress, [], block.number]);
    const proof = proofSchema.safeParse(raw);
    if (!proof.success)
      throw new FlashlogError(
        'WITNESS_RPC',
        `L2 eth_getProof(${messagePasserAddress}) at block ${Number(BigInt(block.number))}: ${proof.error.issues[0]!.message}`,
      );
    for (const node of proof.data.accountProof) addKeccak(node as Hex);
    return proof.data.storageHash as Hex;
  };

  const numbers = Array.from({ length: request.claimedL2BlockNumber - agreedNumber }, (_, i) => agreedNumber + 1 + i);
  const blocks: RpcHeader[] = new Array(numbers.length);
  const concurrency = sources.concurrency ?? 8;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, numbers.length) }, async () => {
      while (next < numbers.length) {
        const index = next++;
        const block = await header(sources.l2, 'eth_getBlockByNumber', numberToHex(numbers[index]!), 'L2');
        if (!block) throw new FlashlogError('WITNESS_MISSING', `L2 block ${numbers[index]} not found on the L2 RPC`);
        blocks[index] = block;
      }
    }),
  );
  let parent = agreed;
  for (const block of [agreed, ...blocks]) {
    if (block !== agreed && block.parentHash.toLowerCase() !== parent.hash.toLowerCase()) {
      throw new FlashlogError(
        'WITNESS_REORG',
        `L2 block ${Number(BigInt(block.number))} does not follow ${parent.hash}: the L2 RPC changed under the request`,
      );
    }
    addKeccak(headerRlpFromRpc(block, `L2 block ${Number(BigInt(block.number))}`));
    parent = block;
  }
  const agreedStorageRoot = await storageRootOf(agreed);
  /** The first L1 block derivation reads, once known (derive: for the L2 blocks before the agreed one and the L1 alike). */
  let derivationFrom: bigint | undefined;
  for (const block of blocks) await storageRootOf(block);
  if ((sources.check ?? 'reexecute') !== 'headers') {
    // Derivation starts from the agreed block: its L1-info deposit and transactions are read too.
    if (sources.check === 'derive') {
      const raw = (await sources.l2('eth_getBlockByHash', [agreed.hash, true])) as { transactions?: unknown[] } | null;
      const transactions = agreedTransactions(raw, agreed.hash as Hex, BigInt(agreed.number));
      for (const node of await orderedTrieNodes(transactions)) addKeccak(node);
      if (sources.derivation) {
        derivationFrom = await derivationL1From(sources.l2, agreed.hash as Hex, sources.derivation);
        const agreedNumber = BigInt(agreed.number);
        const limit = sources.derivation.priorBlocksLimit?.(agreedNumber);
        for (const value of await priorL2Blocks(sources.l2, agreedNumber, derivationFrom, limit)) addKeccak(value);
      }
    }
    for (const block of blocks) {
      if (sources.signal?.aborted) throw new FlashlogError('WITNESS_ABORTED', 'witness collection aborted');
      const witness = await collectBlockWitness(sources.l2, BigInt(block.number));
      if (witness.blockHash.toLowerCase() !== block.hash.toLowerCase())
        throw new FlashlogError('WITNESS_REORG', `L2 block ${Number(BigInt(block.number))} changed under the request`);
      for (const value of Object.values(witness.preimages)) addKeccak(value);
      for (const node of await orderedTrieNodes(witness.transactions)) addKeccak(node);
    }
  }
  addKeccak(concat([`0x${'00'.repeat(32)}`, agreed.stateRoot as Hex, agreedStorageRoot, agreed.hash as Hex]));

  const u64 = (value: number) => hexToBytes(numberToHex(value, { size: 8 }));
  const locals: [number, Uint8Array][] = [
    [bootKeys.l1Head, hexToBytes(request.l1Head)],
    [bootKeys.agreedOutputRoot, hexToBytes(request.agreedL2OutputRoot)],
    [bootKeys.claimedOutputRoot, hexToBytes(request.claimedL2OutputRoot)],
    [bootKeys.claimedBlockNumber, u64(request.claimedL2BlockNumber)],
    [bootKeys.chainId, u64(sources.l2ChainId)],
    [bootKeys.proposer, hexToBytes(request.proposer)],
    [bootKeys.intermediateBlockInterval, u64(request.intermediateBlockInterval)],
    [bootKeys.l1HeadNumber, u64(request.l1HeadNumber)],
  ];
  if (request.scheduleL2BlockNumber !== undefined) locals.push([bootKeys.scheduleBlockNumber, u64(request.scheduleL2BlockNumber)]);
  if (sources.rollupConfigJson !== undefined) locals.push([bootKeys.rollupConfig, new TextEncoder().encode(sources.rollupConfigJson)]);
  const l1 = sources.derivation
    ? await derivationL1Witness({ ...sources, ...request, derivation: sources.derivation, fromNumber: derivationFrom })
    : undefined;
  if (l1) sources.onDerivationWitness?.(l1);
  // The L1 head's header is in both sets: each key once.
  const l1Preimages = (l1?.preimages ?? []).filter(({ key, value }) => key.type !== 'keccak256' || !preimages.has(keccak256(value)));
  return [...locals.map(([id, value]) => ({ key: localKey(id), value })), ...preimages.values(), ...l1Preimages];
}

/** The agreed block's transactions, raw, from its JSON (viem's serializers; the root is checked by the enclave). */
function agreedTransactions(raw: { transactions?: unknown[] } | null, hash: Hex, number: bigint): Hex[] {
  if (!raw || !Array.isArray(raw.transactions) || raw.transactions.some((tx) => typeof tx !== 'object' || tx === null))
    throw new FlashlogError('WITNESS_RPC', `L2 eth_getBlockByHash(${hash}, true): expected a block with its transactions`);
  return rawTransactions(raw as { transactions: unknown[] }, number);
}
