import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, numberToHex, toRlp, type Hex } from 'viem';
import { outputRootV0 } from '../../src/prover/output-root.ts';

/**
 * A chain of real block headers (RLP built with viem, hashes = keccak of the RLP) served over a
 * small JSON-RPC HTTP server: eth_chainId, eth_blockNumber, eth_getBlockByNumber, eth_getBlockByHash.
 * Headers carry Isthmus' withdrawalsRoot (the message-passer storage root), so every block has
 * a real output root the tests can claim.
 */
export interface TestBlock {
  readonly number: number;
  readonly hash: Hex;
  readonly rlp: Hex;
  readonly json: Record<string, string>;
  readonly stateRoot: Hex;
  readonly storageRoot: Hex;
  readonly outputRoot: Hex;
}

const word = (seed: string): Hex => keccak256(new TextEncoder().encode(seed));
const q = (n: number | bigint): Hex => (BigInt(n) === 0n ? '0x' : numberToHex(n));

export function buildHeaderChain(options: { length: number; seed?: string; startTime?: number; startNumber?: number }): TestBlock[] {
  const blocks: TestBlock[] = [];
  let parentHash: Hex = `0x${'00'.repeat(32)}`;
  const seed = options.seed ?? 'chain';
  for (let i = 0; i < options.length; i++) {
    const number = (options.startNumber ?? 0) + i;
    const stateRoot = word(`${seed}:state:${number}`);
    const storageRoot = word(`${seed}:storage:${number}`);
    const timestamp = (options.startTime ?? 1_750_000_000) + 2 * i;
    const fields = {
      parentHash,
      sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347' as Hex,
      miner: '0x4200000000000000000000000000000000000011' as Hex,
      stateRoot,
      transactionsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421' as Hex,
      receiptsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421' as Hex,
      logsBloom: `0x${'00'.repeat(256)}` as Hex,
      difficulty: 0,
      number,
      gasLimit: 30_000_000,
      gasUsed: 21_000 * (i % 3),
      timestamp,
      extraData: '0x00000000fa00000006' as Hex,
      mixHash: word(`${seed}:mix:${number}`),
      nonce: '0x0000000000000000' as Hex,
      baseFeePerGas: 1_000_000 + i,
      withdrawalsRoot: storageRoot,
      blobGasUsed: 0,
      excessBlobGas: 0,
      parentBeaconBlockRoot: word(`${seed}:beacon:${number}`),
      requestsHash: '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' as Hex,
    };
    const rlp = toRlp([
      fields.parentHash,
      fields.sha3Uncles,
      fields.miner,
      fields.stateRoot,
      fields.transactionsRoot,
      fields.receiptsRoot,
      fields.logsBloom,
      q(fields.difficulty),
      q(fields.number),
      q(fields.gasLimit),
      q(fields.gasUsed),
      q(fields.timestamp),
      fields.extraData,
      fields.mixHash,
      fields.nonce,
      q(fields.baseFeePerGas),
      fields.withdrawalsRoot,
      q(fields.blobGasUsed),
      q(fields.excessBlobGas),
      fields.parentBeaconBlockRoot,
      fields.requestsHash,
    ]);
    const hash = keccak256(rlp);
    const json: Record<string, string> = {
      hash,
      parentHash,
      sha3Uncles: fields.sha3Uncles,
      miner: fields.miner,
      stateRoot,
      transactionsRoot: fields.transactionsRoot,
      receiptsRoot: fields.receiptsRoot,
      logsBloom: fields.logsBloom,
      difficulty: '0x0',
      number: numberToHex(number),
      gasLimit: numberToHex(fields.gasLimit),
      gasUsed: numberToHex(fields.gasUsed),
      timestamp: numberToHex(timestamp),
      extraData: fields.extraData,
      mixHash: fields.mixHash,
      nonce: fields.nonce,
      baseFeePerGas: numberToHex(fields.baseFeePerGas),
      withdrawalsRoot: storageRoot,
      blobGasUsed: '0x0',
      excessBlobGas: '0x0',
      parentBeaconBlockRoot: fields.parentBeaconBlockRoot,
      requestsHash: fields.requestsHash,
      size: '0x200',
    };
    blocks.push({ number, hash, rlp, json, stateRoot, storageRoot, outputRoot: outputRootV0(stateRoot, storageRoot, hash) });
    parentHash = hash;
  }
  return blocks;
}

export interface HeaderChainServer {
  readonly url: string;
  /** Requests served, by method. */
  readonly calls: Map<string, number>;
  close(): Promise<void>;
}

export async function serveHeaderChain(blocks: readonly TestBlock[], chainId: number): Promise<HeaderChainServer> {
  const calls = new Map<string, number>();
  const byHash = new Map(blocks.map((block) => [block.hash, block]));
  const byNumber = new Map(blocks.map((block) => [block.number, block]));
  const answer = (body: { id?: unknown; method?: string; params?: unknown[] }) => {
    const method = body.method ?? '';
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const params = body.params ?? [];
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: body.id ?? null, result });
    switch (method) {
      case 'eth_chainId':
        return ok(numberToHex(chainId));
      case 'eth_blockNumber':
        return ok(numberToHex(blocks[blocks.length - 1]!.number));
      case 'eth_getBlockByHash':
        return ok(byHash.get(String(params[0]).toLowerCase() as Hex)?.json ?? null);
      case 'eth_getBlockByNumber': {
        const tag = String(params[0]);
        const block = tag === 'latest' ? blocks[blocks.length - 1] : byNumber.get(Number(BigInt(tag)));
        return ok(block?.json ?? null);
      }
      default:
        return {
          jsonrpc: '2.0',
          id: body.id ?? null,
          error: { code: -32601, message: `the method ${method} does not exist/is not available` },
        };
    }
  };
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    request.on('end', () => {
      const parsed = JSON.parse(text) as unknown;
      const out = Array.isArray(parsed) ? parsed.map((item) => answer(item as never)) : answer(parsed as never);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
