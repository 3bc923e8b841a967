import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keccak256, type Hex } from 'viem';
import { createDevnet } from '../src/devnet/devnet.ts';
import { createEnclaveCore, zeroHash } from '../src/prover/enclave/core.ts';
import { outputRootV0 } from '../src/prover/output-root.ts';
import { collectWitness } from '../src/prover/host/witness.ts';
import { executeBlock } from '../src/evm/op/execute-block.ts';
import { parseBlockFixture } from '../src/evm/op/fixture.ts';
import { encodeHeader, headerFromRpc } from '../src/evm/op/header.ts';
import { rpcCall } from '../test/helpers/prover-fixture.ts';
import { sharedPath } from '../test/helpers/shared.ts';

/**
 * Re-execution against today's header-only check, side by side in one run:
 *   - the 8 real OP Sepolia blocks (shared/fixtures/op-blocks): stateless re-execution from the
 *     witness vs. hashing the given header (what the header-only check does per block);
 *   - a devnet range: the enclave's Prove with --enclave-check reexecute vs. headers, on the same
 *     request preimages.
 */
const fixtures = sharedPath('fixtures/op-blocks');

export async function run(): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  const parsed = readdirSync(fixtures)
    .filter((name) => name.startsWith('op-sepolia-') && name.endsWith('.json'))
    .sort()
    .map((name) => parseBlockFixture(JSON.parse(readFileSync(join(fixtures, name), 'utf8')), name));
  await executeBlock(parsed[0]!.block); // warm-up: module and JIT
  let gas = 0n;
  let reexecMs = 0;
  let headerMs = 0;
  for (const fixture of parsed) {
    const t0 = performance.now();
    const executed = await executeBlock(fixture.block);
    reexecMs += performance.now() - t0;
    if (executed.hash !== fixture.expectedHash) throw new Error(`block ${executed.header.number}: hash differs`);
    gas += executed.header.gasUsed;
    const t1 = performance.now();
    if (keccak256(encodeHeader(executed.header)) !== fixture.expectedHash) throw new Error('header hash');
    headerMs += performance.now() - t1;
  }
  rows.push({
    case: `op-sepolia fixtures (${parsed.length} blocks, ${Number(gas) / 1e6} Mgas)`,
    reexecBlocksPerS: Number((parsed.length / (reexecMs / 1000)).toFixed(2)),
    reexecMgasPerS: Number((Number(gas) / 1e6 / (reexecMs / 1000)).toFixed(2)),
    headerOnlyBlocksPerS: Math.round(parsed.length / (headerMs / 1000)),
    headerOnlyOverReexec: Math.round(reexecMs / headerMs),
  });

  const devnet = await createDevnet({ blockTimeMs: 250, load: 60 });
  try {
    const call = rpcCall(devnet.rpcUrl);
    const blocks = 20;
    const deadline = Date.now() + 60_000;
    while (Number(BigInt((await call('eth_blockNumber', [])) as Hex)) < blocks + 1) {
      if (Date.now() > deadline) throw new Error('devnet too slow');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const headers = await Promise.all(
      Array.from(
        { length: blocks + 1 },
        (_, i) => call('eth_getBlockByNumber', [`0x${(i + 1).toString(16)}`, false]) as Promise<Record<string, string>>,
      ),
    );
    const root = (h: Record<string, string>) => outputRootV0(h.stateRoot as Hex, h.withdrawalsRoot as Hex, h.hash as Hex);
    for (const h of headers) if (keccak256(encodeHeader(headerFromRpc(h))) !== h.hash) throw new Error('devnet header');
    const request = {
      l1Head: headers[0]!.hash as Hex,
      agreedL2HeadHash: headers[0]!.hash as Hex,
      agreedL2OutputRoot: root(headers[0]!),
      claimedL2OutputRoot: root(headers[blocks]!),
      claimedL2BlockNumber: blocks + 1,
      proposer: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65' as Hex,
      intermediateBlockInterval: 1,
      l1HeadNumber: 1,
      imageHash: zeroHash,
    };
    const t0 = performance.now();
    const preimages = await collectWitness(request, { l1: call, l2: call, l2ChainId: 1337 });
    const witnessMs = performance.now() - t0;
    const devnetGas = headers.slice(1).reduce((sum, h) => sum + Number(BigInt(h.gasUsed!)), 0);
    const txs = (
      await Promise.all(headers.slice(1).map((h) => call('eth_getBlockTransactionCountByHash', [h.hash]) as Promise<Hex>))
    ).reduce((sum, n) => sum + Number(BigInt(n)), 0);
    const key = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
    const timed = async (check: 'reexecute' | 'headers') => {
      const core = createEnclaveCore({ privateKey: key, check });
      const t = performance.now();
      const response = await core.handle({ type: 'prove', preimages });
      if (response.type !== 'prove') throw new Error(JSON.stringify(response));
      return performance.now() - t;
    };
    await timed('reexecute');
    const reexec = await timed('reexecute');
    const headerOnly = await timed('headers');
    rows.push({
      case: `devnet range (${blocks} blocks, ${txs} txs, ${(devnetGas / 1e6).toFixed(2)} Mgas), enclave Prove`,
      reexecBlocksPerS: Number((blocks / (reexec / 1000)).toFixed(2)),
      reexecMgasPerS: Number((devnetGas / 1e6 / (reexec / 1000)).toFixed(2)),
      headerOnlyBlocksPerS: Math.round(blocks / (headerOnly / 1000)),
      headerOnlyOverReexec: Math.round(reexec / headerOnly),
      hostWitnessMs: Math.round(witnessMs),
      preimages: preimages.length,
    });
  } finally {
    await devnet.close();
  }
  return rows;
}
