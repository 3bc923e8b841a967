import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBlockFromBytesArray, type Block } from '@ethereumjs/block';
import { createBlockchain } from '@ethereumjs/blockchain';
import { parseGethGenesisState, type GethGenesis } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import { getMerkleStateProof, MerkleStateManager } from '@ethereumjs/statemanager';
import { bigIntMin, createAddressFromString } from '@ethereumjs/util';
import { createVM, runBlock } from '@ethereumjs/vm';
import { bytesToHex, hexToBytes, numberToHex, pad, type Hex } from 'viem';
import { z } from 'zod';
import { genesisRules } from '../../src/simulate/chain-rules.ts';
import { sharedPath } from './shared.ts';

/**
 * An upstream JSON-RPC node serving the execution-apis fixture chain (genesis.json plus the 54
 * blocks of chain.rlp: every tx type up to 7702, blob txs, withdrawals, requests; forks through
 * Osaka, BPO1 and BPO2). The blocks are executed by ethereumjs, so every state root is checked and
 * the state of each block stays readable: the trie DB is never pruned.
 *
 * It serves eth_chainId, net_version, eth_blockNumber, eth_getBlockByNumber, eth_getBlockByHash,
 * eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt and eth_getProof, over
 * JSON-RPC 2.0 on node:http (single and batch). Block tags resolve as on a finalized chain:
 * latest = pending = safe = finalized = head, earliest = genesis.
 *
 * @example
 * const chain = await startFixtureChain();
 * await fetch(chain.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }) }); // result 0x36
 * await chain.close();
 */
export interface FixtureChain {
  readonly url: string;
  /** Head block number (54). */
  readonly head: bigint;
  close(): Promise<void>;
}

const HEAD_HASH: Hex = '0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7';

interface LoadedChain {
  readonly chainId: bigint;
  /** Blocks by number, genesis first. */
  readonly blocks: readonly Block[];
  readonly byHash: ReadonlyMap<string, Block>;
  readonly state: MerkleStateManager;
}

/** Imports the fixture chain once per process (about 2.5 s); the result is immutable. */
let loaded: Promise<LoadedChain> | undefined;
const loadChain = (): Promise<LoadedChain> => (loaded ??= importChain());

async function importChain(): Promise<LoadedChain> {
  const dir = sharedPath('fixtures/execution-apis/tests');
  const genesis = JSON.parse(readFileSync(`${dir}/genesis.json`, 'utf8')) as GethGenesis & {
    config: { blobSchedule?: Record<string, { target: number; max: number; baseFeeUpdateFraction: number }> };
  };
  const { common } = genesisRules(genesis);

  const genesisState = parseGethGenesisState(genesis);
  const blockchain = await createBlockchain({ common, genesisState });
  const state = new MerkleStateManager({ common });
  await state.generateCanonicalGenesis(genesisState);
  const vm = await createVM({ common, blockchain, stateManager: state });

  // chain.rlp is the blocks' RLP encodings back to back.
  const blocks: Block[] = [blockchain.genesisBlock];
  for (let rest: Uint8Array = readFileSync(`${dir}/chain.rlp`); rest.length > 0;) {
    const { data, remainder } = RLP.decode(rest, true);
    const block = createBlockFromBytesArray(data as Parameters<typeof createBlockFromBytesArray>[0], { common, setHardfork: true });
    // runBlock validates the header against its parent and checks gas, receipts and state roots.
    await runBlock(vm, { block, setHardfork: true });
    await blockchain.putBlock(block);
    blocks.push(block);
    rest = remainder;
  }
  const headHash = bytesToHex(blocks.at(-1)!.hash());
  if (headHash !== HEAD_HASH) throw new Error(`fixture chain head: expected ${HEAD_HASH}, imported ${headHash}`);
  return { chainId: common.chainId(), blocks, byHash: new Map(blocks.map((block) => [bytesToHex(block.hash()), block])), state };
}

/** The spec's JSON-RPC error codes, carried by what a method throws. */
class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

// Params, as execution-apis spells them (openrpc `components/schemas`).
const hex = (pattern: RegExp, expected: string) => z.string().regex(pattern, `expected ${expected}`);
const quantity = hex(/^0x(0|[1-9a-f][0-9a-f]*)$/i, 'a hex quantity without leading zeros');
const hash32 = hex(/^0x[0-9a-f]{64}$/i, 'a 32-byte hex hash').transform((value) => value.toLowerCase());
const address = hex(/^0x[0-9a-f]{40}$/i, 'a 20-byte hex address').transform((value) => createAddressFromString(value));
const slot = hex(/^0x[0-9a-f]{0,64}$/i, 'a hex storage slot of at most 32 bytes').transform((value) =>
  hexToBytes(pad(value as Hex, { size: 32 })),
);

type BlockRef = { tag: z.infer<typeof tag> } | { number: bigint } | { hash: string };
const tag = z.enum(['latest', 'pending', 'safe', 'finalized', 'earliest']);
const byTag = tag.transform((value): BlockRef => ({ tag: value }));
const byNumber = quantity.transform((value): BlockRef => ({ number: BigInt(value) }));
const byHash = hash32.transform((value): BlockRef => ({ hash: value }));
const blockNumberOrTag = z.union([byTag, byNumber], { error: 'expected a hex block number or latest, pending, safe, finalized, earliest' });
// EIP-1898: state methods also take a block hash, bare (geth) or as {blockHash}, or {blockNumber}.
const blockNumberOrHash = z.union(
  [
    byHash,
    byTag,
    byNumber,
    z.object({ blockHash: byHash, requireCanonical: z.boolean().optional() }).transform(({ blockHash }) => blockHash),
    z.object({ blockNumber: blockNumberOrTag }).transform(({ blockNumber }) => blockNumber),
  ],
  { error: 'expected a hex block number, a block tag, a block hash, {blockHash} or {blockNumber}' },
);

const request = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string(),
  params: z.array(z.unknown()).optional(),
});

type Method = (params: unknown[]) => unknown;
/** A method whose params must match `schema`; a mismatch answers -32602 naming the param. */
const method =
  <S extends z.ZodType>(schema: S, run: (params: z.output<S>) => unknown): Method =>
  (params) => {
    const parsed = schema.safeParse(params, { reportInput: true });
    if (parsed.success) return run(parsed.data);
    const issue = parsed.error.issues[0]!;
    const got = issue.input === undefined ? 'nothing' : JSON.stringify(issue.input);
    throw new RpcError(
      -32602,
      `invalid params: params${issue.path.map((key) => `[${String(key)}]`).join('')}: ${issue.message}, got ${got}`,
    );
  };

/** A quantity as JSON-RPC spells it; ethereumjs writes some (7702 authorizations) as raw bytes. */
const toQuantity = (value: string): Hex => numberToHex(value === '0x' ? 0n : BigInt(value));

/** A transaction object as eth_getBlockByNumber(…, true) returns it (geth's field set). */
function formatTransaction(block: Block, index: number) {
  const tx = block.transactions[index]!;
  const { gasLimit, data, authorizationList, ...fields } = tx.toJSON();
  // A fee-market tx's gasPrice is what it paid: base fee plus tip, capped at maxFeePerGas.
  const gasPrice = 'maxFeePerGas' in tx ? bigIntMin(tx.maxFeePerGas, block.header.baseFeePerGas! + tx.maxPriorityFeePerGas) : tx.gasPrice;
  return {
    ...fields,
    // A legacy tx signed without EIP-155 (v = 27 or 28) has no chain id.
    chainId: tx.type === 0 && tx.v! < 35n ? undefined : fields.chainId,
    to: fields.to ?? null,
    gas: gasLimit,
    gasPrice: numberToHex(gasPrice),
    input: data,
    hash: bytesToHex(tx.hash()),
    from: tx.getSenderAddress().toString(),
    blockHash: bytesToHex(block.hash()),
    blockNumber: numberToHex(block.header.number),
    transactionIndex: numberToHex(index),
    authorizationList: authorizationList?.map((item) => ({
      chainId: toQuantity(item.chainId),
      address: item.address,
      nonce: toQuantity(item.nonce),
      yParity: toQuantity(item.yParity),
      r: toQuantity(item.r),
      s: toQuantity(item.s),
    })),
  };
}

/** A block object as eth_getBlockByNumber returns it; totalDifficulty is left out, as geth does. */
function formatBlock(block: Block, fullTransactions: boolean) {
  const { uncleHash, coinbase, transactionsTrie, receiptTrie, ...header } = block.header.toJSON();
  return {
    ...header,
    hash: bytesToHex(block.hash()),
    sha3Uncles: uncleHash,
    miner: coinbase,
    transactionsRoot: transactionsTrie,
    receiptsRoot: receiptTrie,
    size: numberToHex(block.serialize().length),
    transactions: block.transactions.map((tx, index) => (fullTransactions ? formatTransaction(block, index) : bytesToHex(tx.hash()))),
    uncles: block.uncleHeaders.map((uncle) => bytesToHex(uncle.hash())),
    withdrawals: block.withdrawals?.map((withdrawal) => withdrawal.toJSON()),
  };
}

function createMethods(chain: LoadedChain): Map<string, Method> {
  const head = chain.blocks.at(-1)!;
  const findBlock = (ref: BlockRef): Block | undefined =>
    'tag' in ref
      ? ref.tag === 'earliest'
        ? chain.blocks[0]
        : head
      : 'number' in ref
        ? ref.number <= head.header.number
          ? chain.blocks[Number(ref.number)]
          : undefined
        : chain.byHash.get(ref.hash);
  // One state manager per block, at its state root, shared by all reads of that block.
  const states = new Map<Block, Promise<MerkleStateManager>>();
  const stateAt = (ref: BlockRef): Promise<MerkleStateManager> => {
    const block = findBlock(ref);
    if (!block) throw new RpcError(-32000, 'header not found');
    let state = states.get(block);
    if (!state) {
      const copy = chain.state.shallowCopy(false);
      state = copy.setStateRoot(block.header.stateRoot).then(() => copy);
      states.set(block, state);
    }
    return state;
  };

  return new Map(
    Object.entries({
      eth_chainId: method(z.tuple([]), () => numberToHex(chain.chainId)),
      net_version: method(z.tuple([]), () => chain.chainId.toString()),
      eth_blockNumber: method(z.tuple([]), () => numberToHex(head.header.number)),
      eth_getBlockByNumber: method(z.tuple([blockNumberOrTag, z.boolean()]), ([ref, full]) => {
        const block = findBlock(ref);
        return block ? formatBlock(block, full) : null;
      }),
      eth_getBlockByHash: method(z.tuple([hash32, z.boolean()]), ([hash, full]) => {
        const block = chain.byHash.get(hash);
        return block ? formatBlock(block, full) : null;
      }),
      eth_getBalance: method(z.tuple([address, blockNumberOrHash]), async ([account, ref]) =>
        numberToHex((await (await stateAt(ref)).getAccount(account))?.balance ?? 0n),
      ),
      eth_getTransactionCount: method(z.tuple([address, blockNumberOrHash]), async ([account, ref]) =>
        numberToHex((await (await stateAt(ref)).getAccount(account))?.nonce ?? 0n),
      ),
      eth_getCode: method(z.tuple([address, blockNumberOrHash]), async ([account, ref]) =>
        bytesToHex(await (await stateAt(ref)).getCode(account)),
      ),
      eth_getStorageAt: method(z.tuple([address, slot, blockNumberOrHash]), async ([account, key, ref]) =>
        pad(bytesToHex(await (await stateAt(ref)).getStorage(account, key)), { size: 32 }),
      ),
      eth_getProof: method(z.tuple([address, z.array(slot), blockNumberOrHash]), async ([account, keys, ref]) =>
        getMerkleStateProof(await stateAt(ref), account, keys),
      ),
    }),
  );
}

/** Imports the fixture chain (once per process) and serves it on 127.0.0.1 at a free port. */
export async function startFixtureChain(): Promise<FixtureChain> {
  const chain = await loadChain();
  const methods = createMethods(chain);

  const answer = async (body: unknown) => {
    const parsed = request.safeParse(body);
    const id = parsed.success ? (parsed.data.id ?? null) : null;
    try {
      if (!parsed.success) throw new RpcError(-32600, 'invalid request');
      const run = methods.get(parsed.data.method);
      if (!run) throw new RpcError(-32601, `the method ${parsed.data.method} does not exist/is not available`);
      return { jsonrpc: '2.0', id, result: await run(parsed.data.params ?? []) };
    } catch (error) {
      const code = error instanceof RpcError ? error.code : -32603;
      return { jsonrpc: '2.0', id, error: { code, message: (error as Error).message } };
    }
  };
  const answerText = async (text: string) => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } };
    }
    if (!Array.isArray(body)) return answer(body);
    if (body.length === 0) return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } };
    return Promise.all(body.map(answer));
  };

  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => {
      void answerText(text).then((out) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    head: chain.blocks.at(-1)!.header.number,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
