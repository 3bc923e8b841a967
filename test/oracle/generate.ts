/**
 * Writes test/fixtures/op-geth/: op-geth (test/go/build.sh) builds the oracle chain's nine blocks
 * (chain.ts) through the engine API, as a sequencer has it build them: engine_forkchoiceUpdatedV3
 * with the deposits forced in the payload attributes and the user transactions taken from its pool,
 * engine_getPayloadV4, engine_newPayloadV4, engine_forkchoiceUpdatedV3. Then, per block, the
 * fixture in the op-blocks format (shared/fixtures/op-blocks/SOURCE.md): the payload attributes,
 * op-geth's header and hash, and the preimages from its debug_executionWitness plus the
 * L2ToL1MessagePasser's account proof at the parent (eth_getProof).
 *
 *   node test/oracle/generate.ts
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keccak256, numberToHex, type Hex } from 'viem';
import { encodeHeader, headerFromRpc, headerFields } from '../../src/op/header.ts';
import { engineClient, startOpGeth, type OpGethNode } from '../helpers/op-geth.ts';
import { goPrograms } from '../helpers/strict-clients.ts';
import { BLOCK_COUNT, CHAIN_ID, compileOracleContracts, payloadAttributes, rollupConfig, scenario } from './chain.ts';
import { oracleGenesis } from './genesis.ts';

const out = join(import.meta.dirname, '..', 'fixtures', 'op-geth');
const messagePasser = '0x4200000000000000000000000000000000000016';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A JSON-RPC block's header fields (no transactions, no totals). */
function headerOnly(block: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries([...headerFields, 'hash'].filter((field) => block[field] !== undefined).map((field) => [field, block[field]]));
}

/** keccak256 → value for every state node, code and ancestor header of op-geth's witness, each checked. */
async function preimagesOf(node: OpGethNode, number: bigint): Promise<Record<Hex, Hex>> {
  const witness = await node.rpc<{ state: Hex[]; codes: Hex[]; headers: Record<string, unknown>[] }>('debug_executionWitness', [
    numberToHex(number),
  ]);
  const preimages = new Map<Hex, Hex>();
  const add = (value: Hex) => preimages.set(keccak256(value), value.toLowerCase() as Hex);
  for (const value of [...witness.state, ...witness.codes]) add(value);
  // Ancestor headers come as JSON: their RLP is the preimage of their hash.
  for (const json of witness.headers) {
    const rlp = encodeHeader(headerFromRpc(json, `debug_executionWitness(${number}).headers`));
    if (keccak256(rlp) !== json.hash)
      throw new Error(`block ${number}: witness header ${String(json.hash)} re-encodes to ${keccak256(rlp)}`);
    add(rlp);
  }
  // An Isthmus header's withdrawalsRoot is the message passer's storage root: its account path.
  const proof = await node.rpc<{ accountProof: Hex[] }>('eth_getProof', [messagePasser, [], numberToHex(number - 1n)]);
  for (const value of proof.accountProof) add(value);
  return Object.fromEntries([...preimages].sort(([a], [b]) => a.localeCompare(b)));
}

async function main() {
  const started = performance.now();
  const { opGeth } = goPrograms();
  const { OracleL1Block, OracleProbe } = compileOracleContracts();
  const genesis = await oracleGenesis(opGeth, OracleL1Block);
  const blocks = await scenario(OracleProbe);
  const node = await startOpGeth(opGeth, genesis);
  const engine = engineClient(node);
  try {
    let head = (await node.rpc<{ hash: Hex }>('eth_getBlockByNumber', ['0x0', false])).hash;
    for (const block of blocks) {
      for (const raw of block.userTxs) await node.rpc('eth_sendRawTransaction', [raw]);
      for (let tries = 0; ; tries++) {
        const status = await node.rpc<{ pending: Hex }>('txpool_status');
        if (Number(status.pending) === block.userTxs.length) break;
        if (tries > 100)
          throw new Error(`block ${block.number}: the pool holds ${status.pending} pending, expected ${block.userTxs.length}`);
        await sleep(50);
      }
      const attributes = payloadAttributes(block, block.deposits, block.userTxs.length === 0);
      const id = await engine.startBuilding(head, attributes);
      // The pool's transactions go into the full payload, which is built after the empty one.
      await sleep(block.userTxs.length ? 1000 : 100);
      const payload = await engine.getPayload(id);
      const expected = block.deposits.length + block.userTxs.length;
      if (payload.transactions.length !== expected)
        throw new Error(`block ${block.number}: op-geth built ${payload.transactions.length} transactions, expected ${expected}`);
      const status = await engine.newPayload(payload, attributes.parentBeaconBlockRoot);
      if (status.status !== 'VALID') throw new Error(`block ${block.number}: engine_newPayloadV4 ${JSON.stringify(status)}`);
      const fcu = await engine.setHead(payload.blockHash);
      if (fcu.status !== 'VALID') throw new Error(`block ${block.number}: engine_forkchoiceUpdatedV3 ${JSON.stringify(fcu)}`);
      head = payload.blockHash;
      const receipts = await node.rpc<Record<string, Hex | undefined>[]>('eth_getBlockReceipts', [payload.blockHash]);
      const statuses = receipts.map((receipt) => `${receipt.type}:${receipt.status === '0x1' ? 'ok' : 'reverted'}`).join(' ');
      const user = receipts.find((receipt) => receipt.type !== '0x7e');
      const fees = user
        ? `; first user tx: l1Fee ${user.l1Fee}, operatorFeeScalar ${user.operatorFeeScalar}, operatorFeeConstant ${user.operatorFeeConstant}, daFootprintGasScalar ${user.daFootprintGasScalar}`
        : '';
      console.log(`block ${block.number}: ${payload.blockHash}, transactions ${statuses}${fees}`);
    }

    mkdirSync(out, { recursive: true });
    for (const name of readdirSync(out).filter((name) => /^op-geth-\d+\.json$/.test(name))) rmSync(join(out, name));
    writeFileSync(join(out, 'genesis.json'), `${JSON.stringify(genesis, null, 1)}\n`);
    let total = 0;
    for (const block of blocks) {
      const json = await node.rpc<Record<string, unknown> & { transactions: Hex[]; hash: Hex }>('eth_getBlockByNumber', [
        numberToHex(block.number),
        false,
      ]);
      const parent = await node.rpc<Record<string, unknown>>('eth_getBlockByNumber', [numberToHex(block.number - 1n), false]);
      const raw = await Promise.all(json.transactions.map((hash) => node.rpc<Hex>('debug_getRawTransaction', [hash])));
      const attributes = payloadAttributes(block, raw, true);
      const fixture = {
        source: `op-geth v1.101702.3 on the flashlog oracle chain (test/oracle/chain.ts): ${block.covers}`,
        chainId: CHAIN_ID,
        blockNumber: Number(block.number),
        rollupConfig,
        parentHeader: headerOnly(parent),
        payload: {
          timestamp: attributes.timestamp,
          prevRandao: attributes.prevRandao,
          feeRecipient: attributes.suggestedFeeRecipient,
          parentBeaconBlockRoot: attributes.parentBeaconBlockRoot,
          gasLimit: attributes.gasLimit,
          eip1559Params: attributes.eip1559Params,
          minBaseFee: block.minBaseFee === undefined ? null : numberToHex(block.minBaseFee),
          transactions: raw,
        },
        expected: { blockHash: json.hash, header: headerOnly(json) },
        preimages: await preimagesOf(node, block.number),
      };
      const text = `${JSON.stringify(fixture, null, 1)}\n`;
      total += text.length;
      writeFileSync(join(out, `op-geth-${block.number}.json`), text);
      console.log(`op-geth-${block.number}.json: ${Object.keys(fixture.preimages).length} preimages, ${text.length} bytes`);
    }
    console.log(`${BLOCK_COUNT} fixtures, ${total} bytes, in ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    console.error(node.log().slice(-6000));
    throw error;
  } finally {
    await node.close();
  }
}

await main();
