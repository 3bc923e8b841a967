import { readFileSync } from 'node:fs';
import { keccak256, pad, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureChain, type FixtureChain } from '../helpers/fixture-chain.ts';
import { sharedPath } from '../helpers/shared.ts';

type Alloc = Record<string, { balance: Hex; code?: Hex; nonce?: Hex; storage?: Record<Hex, Hex> }>;
const alloc = (JSON.parse(readFileSync(sharedPath('fixtures/execution-apis/tests/genesis.json'), 'utf8')) as { alloc: Alloc }).alloc;
const pick = (test: (account: Alloc[string]) => boolean): [Hex, Alloc[string]] => {
  const found = Object.entries(alloc).find(([, account]) => test(account));
  if (!found) throw new Error('no such alloc account');
  return [`0x${found[0]}`, found[1]];
};

let chain: FixtureChain;
let id = 0;
const post = async (body: unknown): Promise<any> =>
  (await fetch(chain.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
const call = (method: string, params: unknown[] = []) => post({ jsonrpc: '2.0', id: ++id, method, params });
const result = async (method: string, params: unknown[] = []) => {
  const response = await call(method, params);
  if (response.error) throw new Error(`${method}: ${response.error.message}`);
  return response.result;
};

beforeAll(async () => {
  chain = await startFixtureChain();
}, 60_000);
afterAll(async () => {
  await chain?.close();
});

describe('fixture chain upstream', () => {
  it('serves the imported head', async () => {
    expect(chain.head).toBe(54n);
    expect(await result('eth_blockNumber')).toBe('0x36');
    expect(await result('eth_chainId')).toBe('0xc72dd9d5e883e');
    const latest = await result('eth_getBlockByNumber', ['latest', false]);
    expect(latest.hash).toBe('0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7');
    expect(latest.number).toBe('0x36');
    expect(await result('eth_getBlockByHash', [latest.hash, false])).toEqual(latest);
    expect(await result('eth_getBlockByNumber', ['0x37', false])).toBeNull();
  });

  it('reads genesis alloc state at block 0', async () => {
    const [eoa, eoaAccount] = pick((account) => !account.code && BigInt(account.balance) > 0n);
    expect(await result('eth_getBalance', [eoa, '0x0'])).toBe(eoaAccount.balance);

    const [contract, contractAccount] = pick((account) => (account.code?.length ?? 0) > 2);
    expect(await result('eth_getCode', [contract, 'earliest'])).toBe(contractAccount.code);

    const [holder, holderAccount] = pick((account) => Object.keys(account.storage ?? {}).length > 0);
    const [slot, value] = Object.entries(holderAccount.storage!)[0]!;
    expect(await result('eth_getStorageAt', [holder, slot, '0x0'])).toBe(pad(value as Hex, { size: 32 }));
    expect(await result('eth_getTransactionCount', [holder, { blockNumber: '0x0' }])).toBe(holderAccount.nonce ?? '0x0');
  });

  it('answers state at a block hash and proves against its state root', async () => {
    const [contract] = pick((account) => (account.code?.length ?? 0) > 2);
    const genesis = await result('eth_getBlockByNumber', ['0x0', false]);
    expect(await result('eth_getCode', [contract, { blockHash: genesis.hash }])).toBe(await result('eth_getCode', [contract, '0x0']));
    const proof = await result('eth_getProof', [contract, ['0x0'], genesis.hash]);
    expect(keccak256(proof.accountProof[0])).toBe(genesis.stateRoot);
    const missing = await call('eth_getBalance', [contract, '0x99']);
    expect(missing.error).toEqual({ code: -32000, message: 'header not found' });
  });

  it('returns full transaction objects', async () => {
    const block = await result('eth_getBlockByNumber', ['0x2a', true]);
    const tx = block.transactions.find((candidate: { type: Hex }) => candidate.type === '0x3');
    expect(tx).toMatchObject({
      blockHash: block.hash,
      blockNumber: '0x2a',
      hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      from: expect.stringMatching(/^0x[0-9a-f]{40}$/),
    });
    expect(tx.blobVersionedHashes).toHaveLength(1);
  });

  it('answers JSON-RPC errors and batches', async () => {
    const unknown = await call('eth_noSuchMethod');
    expect(unknown).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32601 } });
    const bad = await call('eth_getBalance', ['0x12', 'latest']);
    expect(bad.error.code).toBe(-32602);
    expect(bad.error.message).toContain('params[0]');
    const batch = await post([
      { jsonrpc: '2.0', id: 'a', method: 'eth_blockNumber' },
      { jsonrpc: '2.0', id: 'b', method: 'net_version' },
    ]);
    expect(batch).toEqual([
      { jsonrpc: '2.0', id: 'a', result: '0x36' },
      { jsonrpc: '2.0', id: 'b', result: '3503995874084926' },
    ]);
  });
});
