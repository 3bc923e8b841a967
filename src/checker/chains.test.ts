import { describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import type { Answer } from './compare.ts';
import { compareChains, endpointChain } from './chains.ts';
import type { Endpoint } from './endpoint.ts';

const genesisA = keccak256(toHex('genesis A'));
const genesisB = keccak256(toHex('genesis B'));

const endpoint = (url: string, chainId: unknown, genesis: unknown): Endpoint => ({
  url,
  async call(method): Promise<Answer> {
    if (method === 'eth_chainId') return { result: chainId };
    if (method === 'eth_getBlockByNumber') return { result: genesis };
    throw new Error(`unexpected ${method}`);
  },
});

describe('compareChains', () => {
  it('finds one chain when chain id and genesis hash agree (the hash in any case)', async () => {
    const result = await compareChains(
      endpoint('g', '0x539', { hash: genesisA.toUpperCase().replace('0X', '0x') }),
      endpoint('n', '0x539', { hash: genesisA }),
    );
    expect(result).toEqual({ kind: 'same', chain: { chainId: 1337n, genesisHash: genesisA } });
  });

  it('names both sides and both chains when the genesis differs under one chain id', async () => {
    const result = await compareChains(
      endpoint('http://g', '0x539', { hash: genesisA }),
      endpoint('http://n', '0x539', { hash: genesisB }),
    );
    expect(result.kind).toBe('different');
    expect(result.kind === 'different' && result.message).toBe(
      `the gateway http://g serves chain id 1337, genesis ${genesisA}, but the node http://n is chain id 1337, genesis ${genesisB}: --node must be the gateway's own upstream`,
    );
  });

  it('tells another chain id apart', async () => {
    const result = await compareChains(endpoint('g', '0x2105', { hash: genesisA }), endpoint('n', '0x539', { hash: genesisA }));
    expect(result).toMatchObject({ kind: 'different', gateway: { chainId: 8453n }, node: { chainId: 1337n } });
  });
});

describe('endpointChain', () => {
  it('names the endpoint and the field of an answer that is not a chain id', async () => {
    await expect(endpointChain(endpoint('http://g', 1337, { hash: genesisA }))).rejects.toThrow(
      'http://g eth_chainId: expected a 0x-hex quantity, got 1337',
    );
  });

  it('names the endpoint and the field when there is no genesis block', async () => {
    await expect(endpointChain(endpoint('http://n', '0x539', null))).rejects.toThrow(
      'http://n eth_getBlockByNumber("0x0").hash: expected a 32-byte 0x-hex hash, got null',
    );
  });
});
