import { formatTransaction, keccak256, numberToHex, type Hex } from 'viem';
import { serializeTransaction } from 'viem/op-stack';
import { z } from 'zod';
import { FlashlogError } from '../../errors.ts';
import { feeVaults, l1BlockAddress, slotKey } from '../../op/l1-cost.ts';
import { messagePasserAddress as messagePasser } from '../../op/predeploys.ts';
import { encodeHeader, headerFromRpc } from '../../op/header.ts';
import type { CallRpc } from '../../jsonrpc/protocol.ts';

/** Raw JSON-RPC: the method's result, or a thrown error naming the endpoint. */

/** One block to re-execute, as an L2 node gives it: the fixture format of `shared/fixtures/op-blocks`, minus the rollup config. */
export interface RpcBlockWitness {
  readonly parentHeader: Record<string, unknown>;
  readonly header: Record<string, unknown>;
  readonly blockHash: Hex;
  readonly transactions: readonly Hex[];
  /** keccak256(value) -> value: trie nodes, codes, ancestor headers. */
  readonly preimages: Readonly<Record<Hex, Hex>>;
  /** `debug_executionWitness` or `eth_getProof`. */
  readonly source: 'debug_executionWitness' | 'eth_getProof';
}

const executionWitnessSchema = z.object({
  state: z.array(z.string()),
  codes: z.array(z.string()).optional(),
  // RLP hex (reth), or JSON-RPC header objects (op-geth v1.101702.3)
  headers: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).optional(),
  keys: z.unknown().optional(), // unused (op-geth: an object, reth: a list)
});
const proofSchema = z.object({
  accountProof: z.array(z.string()),
  codeHash: z.string(),
  storageProof: z.array(z.object({ key: z.string(), proof: z.array(z.string()) })),
});
const prestateSchema = z.record(z.string(), z.object({ storage: z.record(z.string(), z.string()).optional() }).passthrough());
const emptyCodeHash = keccak256('0x');
const beaconRoots = '0x000f3df6d732807ef1319fb7b8bb8522d0beac02';
const historyStorage = '0x0000f90827f1c53a10cb7a02335b175320002935';

/** A legacy transaction's signature as viem takes it: v itself (EIP-155 carries the chain id in it). */
function legacySignature(rpc: { type: Hex; v?: Hex; r?: Hex; s?: Hex }) {
  if (rpc.type !== '0x0' || rpc.v === undefined || !rpc.r || !rpc.s) return undefined;
  return { r: rpc.r, s: rpc.s, v: BigInt(rpc.v) };
}

/** The block's signed transactions, rebuilt from its JSON and checked against their hashes. */
export function rawTransactions(block: { transactions: unknown[] }, number: bigint): Hex[] {
  return block.transactions.map((json, index) => {
    const rpc = json as {
      hash: Hex;
      type: Hex;
      v?: Hex;
      r?: Hex;
      s?: Hex;
      chainId?: Hex;
      sourceHash?: Hex;
      mint?: Hex;
      isSystemTx?: boolean;
      input: Hex;
    };
    const tx: Record<string, unknown> =
      rpc.type === '0x7e'
        ? {
            ...formatTransaction(json as never),
            type: 'deposit',
            sourceHash: rpc.sourceHash,
            mint: rpc.mint ? BigInt(rpc.mint) : undefined,
            isSystemTx: rpc.isSystemTx,
            data: rpc.input,
          }
        : { ...formatTransaction(json as never), data: rpc.input };
    const raw = serializeTransaction(tx as never, legacySignature(rpc) as never) as Hex;
    if (keccak256(raw) !== rpc.hash.toLowerCase()) {
      throw new FlashlogError(
        'WITNESS_RPC',
        `block ${number} transaction ${index}: rebuilt bytes hash to ${keccak256(raw)}, the node says ${rpc.hash}`,
      );
    }
    return raw;
  });
}

/**
 * Gathers what re-executing block `number` needs from an L2 node: `debug_executionWitness` where
 * the node has it; otherwise a prestate trace of every transaction (the accounts and slots it
 * reads), `eth_getProof` at the parent for those and for what OP Stack block processing always
 * touches (L1Block, fee vaults, fee recipient, the EIP-4788 and EIP-2935 contracts, the message
 * passer), and their code.
 *
 * The eth_getProof route cannot see the trie nodes a deletion needs beside the deleted path (a
 * branch left with one child is merged with it): re-executing such a block names that node as
 * missing, and the block needs a node with debug_executionWitness.
 *
 * @example const witness = await collectBlockWitness(rpc, 12n)
 */
export async function collectBlockWitness(rpc: CallRpc, number: bigint): Promise<RpcBlockWitness> {
  const block = (await rpc('eth_getBlockByNumber', [numberToHex(number), true])) as
    (Record<string, unknown> & { hash: Hex; transactions: unknown[] }) | null;
  const parent = (await rpc('eth_getBlockByNumber', [numberToHex(number - 1n), false])) as Record<string, unknown> | null;
  if (!block || !parent) throw new FlashlogError('WITNESS_MISSING', `block ${number} or its parent is not on the L2 node`);
  const transactions = rawTransactions(block, number);
  const preimages = new Map<Hex, Hex>();
  const add = (value: string) => {
    preimages.set(keccak256(value as Hex), value.toLowerCase() as Hex);
  };

  let executionWitness: unknown;
  try {
    executionWitness = await rpc('debug_executionWitness', [numberToHex(number)]);
  } catch {
    executionWitness = undefined;
  }
  const gathered = (source: 'debug_executionWitness' | 'eth_getProof') => ({
    parentHeader: parent,
    header: { ...block, transactions: undefined },
    blockHash: block.hash,
    transactions,
    preimages: Object.fromEntries(preimages),
    source,
  });
  const parsed = executionWitnessSchema.safeParse(executionWitness);
  if (parsed.success) {
    for (const value of [...parsed.data.state, ...(parsed.data.codes ?? [])]) add(value);
    for (const header of parsed.data.headers ?? []) add(typeof header === 'string' ? header : encodeHeader(headerFromRpc(header)));
    // op-geth leaves the L2ToL1MessagePasser out when the block does not touch it, but an Isthmus
    // header's withdrawalsRoot is its storage root: its account path at the parent is added.
    const proof = proofSchema.safeParse(await rpc('eth_getProof', [messagePasser, [], numberToHex(number - 1n)]));
    if (!proof.success)
      throw new FlashlogError('WITNESS_RPC', `eth_getProof(${messagePasser}) at block ${number - 1n}: ${proof.error.issues[0]!.message}`);
    for (const node of proof.data.accountProof) add(node);
    return gathered('debug_executionWitness');
  }

  const touched = new Map<string, Set<Hex>>();
  const touch = (address: string, slots: readonly Hex[] = []) => {
    const set = touched.get(address.toLowerCase()) ?? new Set<Hex>();
    for (const slot of slots) set.add(slot.toLowerCase() as Hex);
    touched.set(address.toLowerCase(), set);
  };
  const timestamp = BigInt(block.timestamp as string);
  touch(l1BlockAddress, [1n, 3n, 5n, 6n, 7n, 8n].map(slotKey));
  for (const vault of Object.values(feeVaults)) touch(vault);
  touch(block.miner as string);
  touch(messagePasser);
  touch(beaconRoots, [slotKey(timestamp % 8191n), slotKey((timestamp % 8191n) + 8191n)]);
  touch(historyStorage, [slotKey((number - 1n) % 8191n)]);
  for (const tx of block.transactions as { hash: Hex }[]) {
    const trace = prestateSchema.safeParse(await rpc('debug_traceTransaction', [tx.hash, { tracer: 'prestateTracer' }]));
    if (!trace.success)
      throw new FlashlogError('WITNESS_RPC', `debug_traceTransaction(${tx.hash}, prestateTracer): ${trace.error.issues[0]!.message}`);
    for (const [address, account] of Object.entries(trace.data)) touch(address, Object.keys(account.storage ?? {}) as Hex[]);
  }
  const at = numberToHex(number - 1n);
  for (const [address, slots] of touched) {
    const proof = proofSchema.safeParse(await rpc('eth_getProof', [address, [...slots], at]));
    if (!proof.success)
      throw new FlashlogError('WITNESS_RPC', `eth_getProof(${address}) at block ${number - 1n}: ${proof.error.issues[0]!.message}`);
    for (const node of proof.data.accountProof) add(node);
    for (const slot of proof.data.storageProof) for (const node of slot.proof) add(node);
    if (proof.data.codeHash.toLowerCase() !== emptyCodeHash && proof.data.codeHash !== `0x${'00'.repeat(32)}`)
      add((await rpc('eth_getCode', [address, at])) as Hex);
  }
  return gathered('eth_getProof');
}
