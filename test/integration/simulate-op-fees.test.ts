import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  decodeFunctionResult,
  encodeFunctionData,
  hexToBigInt,
  numberToHex,
  pad,
  parseTransaction,
  recoverTransactionAddress,
  toHex,
  type Hex,
  type TransactionSerialized,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feeVaults, l1BlockAddress } from '../../src/op/l1-cost.ts';
import { replayOracleChain, startOpGeth, type OpGethNode, type OracleFixture } from '../helpers/op-geth.ts';
import { startSimulateGateway } from '../helpers/simulate-fixtures.ts';
import { goPrograms } from '../helpers/strict-clients.ts';

/**
 * eth_simulateV1 on an OP Stack chain, held against op-geth: op-geth (test/go/build.sh) replays
 * the oracle chain's blocks (test/fixtures/op-geth, Isthmus then Jovian, non-zero L1 fee
 * parameters and operator fee in L1Block), and a flashlog gateway forked from it (its upstream,
 * chain rules from the same genesis) simulates, on each block's parent, the user transactions of
 * that block as calls (with `validation`, and without it at the mined base fee; the block's time and fee recipient, L1Block's storage as
 * the block's L1-info deposit left it). Then, field by field:
 *   - against the block op-geth mined: the base fee, each call's status, gas used and logs, and
 *     the balances of every sender and of the four fee vaults after the calls (read by a last
 *     call in the same simulated block), which carry the L1 fee and the operator fee;
 *   - against op-geth's own eth_simulateV1 of the same payload: each call's status, gas used,
 *     return data, logs and error. op-geth's simulation charges no L1 fee (its calls carry no L1
 *     cost data: internal/ethapi/transaction_args.go ToMessage, core/types/rollup_cost.go "Do not
 *     charge if there is no rollup cost-data (e.g. RPC call or deposit)"), which is shown too.
 * Blocks whose only deposit is the L1-info deposit are used: a user deposit (mint) is not a call.
 */

const fixtureDir = fileURLToPath(new URL('../fixtures/op-geth/', import.meta.url));
const genesisPath = `${fixtureDir}genesis.json`;
const SEQUENCER_FEE_VAULT = '0x4200000000000000000000000000000000000011';
const READER = '0x00000000000000000000000000000000000be4d0';
const READER_SENDER = '0x00000000000000000000000000000000000be4d1';

const fixtures: OracleFixture[] = readdirSync(fixtureDir)
  .filter((name) => /^op-geth-\d+\.json$/.test(name))
  .map((name) => JSON.parse(readFileSync(`${fixtureDir}${name}`, 'utf8')) as OracleFixture)
  .sort((a, b) => a.blockNumber - b.blockNumber);
/** Blocks with user transactions and no deposit besides the L1-info one. */
const simulated = fixtures.filter(
  (f) => f.payload.transactions.filter((tx) => tx.startsWith('0x7e')).length === 1 && f.payload.transactions.length > 1,
);

/** `balancesOf(address[])`: the balances of the given accounts. */
const readerSource = `// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;
contract Balances {
  function balancesOf(address[] calldata accounts) external view returns (uint256[] memory out) {
    out = new uint256[](accounts.length);
    for (uint256 i = 0; i < accounts.length; i++) out[i] = accounts[i].balance;
  }
}`;
const readerAbi = [
  {
    type: 'function',
    name: 'balancesOf',
    stateMutability: 'view',
    inputs: [{ name: 'accounts', type: 'address[]' }],
    outputs: [{ name: 'out', type: 'uint256[]' }],
  },
] as const;

function compileReader(): Hex {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Balances.sol': { content: readerSource } },
        settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['evm.deployedBytecode.object'] } } },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  return `0x${output.contracts['Balances.sol']!.Balances!.evm.deployedBytecode.object}`;
}

let node: OpGethNode;
let gateway: Awaited<ReturnType<typeof startSimulateGateway>>;
let readerCode: Hex;

async function flashlog<T>(method: string, params: unknown[]): Promise<T> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`flashlog ${method}: ${body.error.message}`);
  return body.result as T;
}

beforeAll(async () => {
  const { opGeth } = goPrograms();
  node = await startOpGeth(opGeth, JSON.parse(readFileSync(genesisPath, 'utf8')));
  await replayOracleChain(node, fixtures);
  readerCode = compileReader();
  gateway = await startSimulateGateway(node.url, genesisPath);
}, 300_000);

afterAll(async () => {
  await gateway?.close();
  await node?.close();
});

/** A signed transaction as the call it stands for (same sender, nonce, gas, fees, data). */
async function asCall(raw: Hex): Promise<Record<string, unknown>> {
  const tx = parseTransaction(raw);
  const from = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
  const call: Record<string, unknown> = {
    from,
    to: tx.to ?? undefined,
    value: toHex(tx.value ?? 0n),
    input: tx.data ?? '0x',
    gas: toHex(tx.gas!),
    nonce: toHex(tx.nonce!),
  };
  if (tx.type === 'legacy') return { ...call, gasPrice: toHex(tx.gasPrice!) };
  Object.assign(call, { maxFeePerGas: toHex(tx.maxFeePerGas!), maxPriorityFeePerGas: toHex(tx.maxPriorityFeePerGas!) });
  if (tx.accessList?.length) call.accessList = tx.accessList;
  if (tx.authorizationList)
    call.authorizationList = tx.authorizationList.map((auth) => ({
      chainId: toHex(auth.chainId),
      address: auth.address,
      nonce: toHex(auth.nonce),
      yParity: toHex(auth.yParity ?? 0),
      r: auth.r,
      s: auth.s,
    }));
  return call;
}

type SimCall = { status: Hex; gasUsed: Hex; returnData: Hex; logs: { address: Hex; topics: Hex[]; data: Hex }[]; error?: unknown };
type SimBlock = { baseFeePerGas: Hex; blobGasUsed: Hex; timestamp: Hex; calls: SimCall[] };
type Receipt = { status: Hex; gasUsed: Hex; type: Hex; logs: { address: Hex; topics: Hex[]; data: Hex }[]; l1Fee?: Hex };

const logsOf = (logs: { address: Hex; topics: Hex[]; data: Hex }[]) =>
  logs.map(({ address, topics, data }) => ({ address: address.toLowerCase(), topics, data }));

describe('eth_simulateV1 on an OP Stack chain, against op-geth', () => {
  it('has blocks to simulate: Isthmus and Jovian ones with user transactions only', () => {
    expect(simulated.map((f) => f.blockNumber).length).toBeGreaterThanOrEqual(2);
  });

  it.each(simulated.flatMap((f) => [[f.blockNumber, true, f] as const, [f.blockNumber, false, f] as const]))(
    'block %i, validation %s: calls pay what its transactions paid (base fee, L1 fee, operator fee, vaults); calls match op-geth eth_simulateV1',
    async (number, validation, fixture) => {
      const userTxs = fixture.payload.transactions.filter((tx) => !tx.startsWith('0x7e'));
      const calls = await Promise.all(userTxs.map(asCall));
      const senders = [...new Set(calls.map((call) => (call.from as string).toLowerCase()))];
      const watched = [...senders, feeVaults.baseFee, feeVaults.l1Fee, feeVaults.operatorFee, SEQUENCER_FEE_VAULT] as Hex[];
      const at = numberToHex(number);
      const parent = numberToHex(number - 1);
      // L1Block's storage as the block's L1-info deposit left it: the fee parameters the block charged by
      const l1Slots = Object.fromEntries(
        await Promise.all(
          Array.from({ length: 9 }, async (_, slot) => {
            const key = pad(numberToHex(slot), { size: 32 });
            return [key, await node.rpc<Hex>('eth_getStorageAt', [l1BlockAddress, key, at])] as const;
          }),
        ),
      );
      const mined = await node.rpc<{ baseFeePerGas: Hex }>('eth_getBlockByNumber', [at, false]);
      const parentHeader = await node.rpc<{ extraData: Hex }>('eth_getBlockByNumber', [parent, false]);
      const payload = {
        validation,
        blockStateCalls: [
          {
            blockOverrides: {
              time: fixture.payload.timestamp,
              feeRecipient: fixture.payload.feeRecipient,
              prevRandao: fixture.payload.prevRandao,
              // Without validation the base fee is 0 unless given; with it, flashlog computes it from the
              // parent (a Jovian parent's version-1 extraData and minBaseFee included) and must get the mined one.
              ...(!validation ? { baseFeePerGas: mined.baseFeePerGas } : {}),
            },
            stateOverrides: {
              [l1BlockAddress]: { stateDiff: l1Slots },
              [READER]: { code: readerCode },
              [READER_SENDER]: { balance: toHex(10n ** 19n) },
            },
            calls: [
              ...calls,
              {
                from: READER_SENDER,
                to: READER,
                input: encodeFunctionData({ abi: readerAbi, functionName: 'balancesOf', args: [watched] }),
                gas: toHex(1_000_000),
                maxFeePerGas: toHex(10n ** 11n),
                maxPriorityFeePerGas: '0x0',
              },
            ],
          },
        ],
      };
      const [ours] = await flashlog<SimBlock[]>('eth_simulateV1', [payload, parent]);
      const answer = await node.rpc<SimBlock[]>('eth_simulateV1', [payload, parent]).catch((error: unknown) => error as Error);
      const receipts = (await node.rpc<Receipt[]>('eth_getBlockReceipts', [at])).filter((receipt) => receipt.type !== '0x7e');
      expect(receipts).toHaveLength(calls.length);
      expect(
        receipts.some((receipt) => hexToBigInt(receipt.l1Fee ?? '0x0') > 0n),
        'the block pays an L1 fee',
      ).toBe(true);

      // against the mined block
      expect(ours!.baseFeePerGas, 'base fee').toBe(mined.baseFeePerGas);
      for (const [i, receipt] of receipts.entries()) {
        const call = ours!.calls[i]!;
        expect({ status: call.status, gasUsed: call.gasUsed, logs: logsOf(call.logs) }, `call ${i}`).toEqual({
          status: receipt.status,
          gasUsed: receipt.gasUsed,
          logs: logsOf(receipt.logs),
        });
      }
      const readBalances = (block: SimBlock) =>
        decodeFunctionResult({ abi: readerAbi, functionName: 'balancesOf', data: block.calls.at(-1)!.returnData }) as readonly bigint[];
      const minedBalances = await Promise.all(
        watched.map(async (address) => hexToBigInt(await node.rpc<Hex>('eth_getBalance', [address, at]))),
      );
      const named = (values: readonly bigint[]) => Object.fromEntries(watched.map((address, i) => [address, values[i]]));
      expect(named(readBalances(ours!)), 'balances after the calls').toEqual(named(minedBalances));

      // against op-geth's own simulation of the same payload. On the Jovian activation block op-geth
      // cannot simulate: it puts that block's L1-info deposit (Isthmus form) before the calls, and
      // its DA footprint then refuses non-deposits in an activation block (op-geth simulate.go
      // processBlock, core/types/rollup_cost.go CalcDAFootprint).
      if (answer instanceof Error) {
        expect(answer.message).toContain('unexpected non-deposit transactions in Jovian activation block');
        const grandparent = await node.rpc<{ extraData: Hex }>('eth_getBlockByNumber', [numberToHex(number - 2), false]);
        expect(
          [parentHeader.extraData.startsWith('0x01'), grandparent.extraData.startsWith('0x01')],
          'the parent is the Jovian activation block',
        ).toEqual([true, false]);
        return;
      }
      const [theirs] = answer;
      const view = (call: SimCall) => ({ ...call, logs: logsOf(call.logs) });
      expect(ours!.calls.slice(0, -1).map(view)).toEqual(theirs!.calls.slice(0, -1).map(view));
      expect(theirs!.baseFeePerGas).toBe(mined.baseFeePerGas);
      // The header's blobGasUsed: from Jovian on the calls' DA footprint, with the base block's L1-info scalar.
      expect(ours!.blobGasUsed, 'blobGasUsed').toBe(theirs!.blobGasUsed);
      if (fixture.payload.minBaseFee !== null) expect(hexToBigInt(ours!.blobGasUsed), 'a Jovian DA footprint').toBeGreaterThan(0n);
      // op-geth's simulation leaves the L1 fee vault as the parent block left it: it charges no L1 fee
      const l1Vault = watched.indexOf(feeVaults.l1Fee);
      const before = hexToBigInt(await node.rpc<Hex>('eth_getBalance', [feeVaults.l1Fee, parent]));
      expect(readBalances(theirs!)[l1Vault]).toBe(before);
      expect(minedBalances[l1Vault]).toBeGreaterThan(before);
    },
    120_000,
  );
});
