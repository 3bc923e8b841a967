/**
 * Writes examples/devnet-block.json, the block `flashlog execute-block` re-executes in the README:
 * one block of a local devnet (chain 1337, Isthmus, under load) with its parent header and the
 * witness it needs (eth_getProof route), in the `shared/fixtures/op-blocks` format.
 *
 *   node scripts/devnet-block-fixture.ts [examples/devnet-block.json]
 */
import { writeFileSync } from 'node:fs';
import type { Hex } from 'viem';
import { createDevnet } from '../devnet/edr/devnet.ts';
import { devnetRollupConfig } from '../src/op/chains.ts';
import { fixtureJsonFromRpc } from '../src/prover/host/fixture.ts';
import { collectBlockWitness } from '../src/prover/host/witness-rpc.ts';

const out = process.argv[2] ?? 'examples/devnet-block.json';
const devnet = await createDevnet({ load: 20, blockTimeMs: 1000 });
const call = async (method: string, params: readonly unknown[]): Promise<unknown> => {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
};
try {
  // A block past the load's deployments with a few user transactions of different kinds.
  for (let number = 4; ; number++) {
    while (Number(BigInt((await call('eth_blockNumber', [])) as Hex)) < number) await new Promise((r) => setTimeout(r, 200));
    const block = (await call('eth_getBlockByNumber', [`0x${number.toString(16)}`, true])) as { transactions: { type: Hex }[] };
    const user = block.transactions.filter((tx) => tx.type !== '0x7e');
    if (user.length < 4 || user.length > 12) continue;
    const witness = await collectBlockWitness(call, BigInt(number));
    const fixture = {
      source: 'flashlog devnet (chain 1337, --load 20): node scripts/devnet-block-fixture.ts',
      chainId: 1337,
      blockNumber: number,
      ...fixtureJsonFromRpc(witness, devnetRollupConfig),
    };
    writeFileSync(out, `${JSON.stringify(fixture, null, 1)}\n`);
    process.stdout.write(
      `${out}: block ${number}, ${block.transactions.length} transactions, ${Object.keys(witness.preimages).length} preimages\n`,
    );
    break;
  }
} finally {
  await devnet.close();
}
