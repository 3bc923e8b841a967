import { readFile } from 'node:fs/promises';
import type { Hex } from 'viem';
import { z } from 'zod';
import { FlashlogError } from '../../errors.ts';
import type { BlockToExecute } from '../../evm/op/execute-block.ts';
import { headerFromRpc, type BlockHeader } from '../../op/header.ts';
import { attributesFromExtraData } from '../../op/base-fee.ts';
import { knownRollupConfigs } from '../../op/chains.ts';
import { parseRollupConfig } from '../../op/rollup-config.ts';
import type { RpcBlockWitness } from './witness-rpc.ts';
import { witnessFromRecord } from '../../evm/op/witness-state.ts';

/**
 * A block to re-execute with what it needs, as `shared/fixtures/op-blocks` lays it out (kona's
 * stateless-executor test data): rollupConfig, parentHeader, payload attributes, preimages, and
 * the expected block hash (and header, where known).
 */
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'expected 0x-hex');
/** Byte strings (transactions, preimages): whole bytes, so an odd length is named here, not by a decoder. */
const bytes = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'expected 0x-hex of whole bytes (an even number of digits)');
export const blockFixtureSchema = z.object({
  chainId: z.number().int().positive().optional(),
  blockNumber: z.number().int().nonnegative().optional(),
  rollupConfig: z.unknown().optional(),
  parentHeader: z.unknown(),
  payload: z.object({
    timestamp: hex,
    prevRandao: hex,
    feeRecipient: hex,
    parentBeaconBlockRoot: hex.nullish(),
    gasLimit: hex,
    eip1559Params: hex.nullish(),
    /** Jovian on: a hex quantity (op-geth's Engine API also writes a JSON number); null before. */
    minBaseFee: z.union([hex.regex(/^0x[0-9a-fA-F]{1,16}$/, 'expected a uint64 hex quantity'), z.number().int().nonnegative()]).nullish(),
    transactions: z.array(bytes),
  }),
  expected: z.object({ blockHash: hex.regex(/^0x[0-9a-fA-F]{64}$/), header: z.unknown().optional() }),
  preimages: z.record(z.string(), bytes),
});

export interface BlockFixture {
  readonly block: BlockToExecute;
  readonly expectedHash: `0x${string}`;
  readonly expectedHeader?: BlockHeader | undefined;
}

/** What a fixture's field holds, shortened for an error message. */
const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
};

/**
 * Parses a fixture's JSON, naming the field that does not fit and what it held. A fixture without
 * `rollupConfig` takes the built-in config of its `chainId` (src/op/chains.ts), if flashlog knows it.
 */
export function parseBlockFixture(raw: unknown, where = 'fixture'): BlockFixture {
  const parsed = blockFixtureSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const got = 'input' in issue && issue.input !== undefined ? ` (got ${shown(issue.input)})` : '';
    throw new FlashlogError('FIXTURE_INVALID', `${where}.${issue.path.join('.')}: ${issue.message}${got}`);
  }
  const { payload, expected, chainId } = parsed.data;
  let rollupConfig = parsed.data.rollupConfig;
  if (rollupConfig === undefined) {
    rollupConfig = chainId === undefined ? undefined : knownRollupConfigs.get(chainId);
    if (rollupConfig === undefined)
      throw new FlashlogError(
        'FIXTURE_INVALID',
        `${where}.rollupConfig: missing, and ${chainId === undefined ? 'no chainId names a chain' : `chain ${chainId} has no built-in config`} to take it from`,
      );
  }
  return {
    block: {
      config: parseRollupConfig(rollupConfig, `${where}.rollupConfig`),
      parent: headerFromRpc(parsed.data.parentHeader, `${where}.parentHeader`),
      attributes: {
        timestamp: BigInt(payload.timestamp),
        prevRandao: payload.prevRandao as `0x${string}`,
        feeRecipient: payload.feeRecipient as `0x${string}`,
        gasLimit: BigInt(payload.gasLimit),
        parentBeaconBlockRoot: (payload.parentBeaconBlockRoot ?? undefined) as `0x${string}` | undefined,
        eip1559Params: (payload.eip1559Params ?? undefined) as `0x${string}` | undefined,
        minBaseFee: payload.minBaseFee === null || payload.minBaseFee === undefined ? undefined : BigInt(payload.minBaseFee),
        transactions: payload.transactions as `0x${string}`[],
      },
      witness: witnessFromRecord(parsed.data.preimages),
    },
    expectedHash: expected.blockHash.toLowerCase() as `0x${string}`,
    expectedHeader: expected.header === undefined ? undefined : headerFromRpc(expected.header, `${where}.expected.header`),
  };
}

export async function readBlockFixture(path: string): Promise<BlockFixture> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new FlashlogError('FIXTURE_UNREADABLE', `${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new FlashlogError('FIXTURE_INVALID', `${path}: not JSON (${(error as Error).message})`);
  }
  return parseBlockFixture(json, path);
}

/**
 * The fixture file of a block collected from an L2 node ({@link RpcBlockWitness}), in the
 * `shared/fixtures/op-blocks` format: payload attributes taken from the block's own header
 * (timestamp, prevRandao, fee recipient, gas limit, beacon root, Holocene eip1559Params and
 * Jovian minBaseFee from extraData), the expected hash and header the node's.
 */
export function fixtureJsonFromRpc(witness: RpcBlockWitness, rollupConfig: unknown): z.input<typeof blockFixtureSchema> {
  const header = witness.header as Record<string, string | undefined>;
  const extraData = (header.extraData ?? '0x') as Hex;
  return {
    rollupConfig,
    parentHeader: witness.parentHeader,
    payload: {
      timestamp: header.timestamp!,
      prevRandao: header.mixHash!,
      feeRecipient: header.miner!,
      parentBeaconBlockRoot: header.parentBeaconBlockRoot,
      gasLimit: header.gasLimit!,
      ...attributesFromExtraData(extraData),
      transactions: [...witness.transactions],
    },
    expected: { blockHash: witness.blockHash, header: witness.header },
    preimages: witness.preimages,
  };
}

/** The fixture of a block collected from an L2 node, parsed ({@link fixtureJsonFromRpc}). */
export function fixtureFromRpc(witness: RpcBlockWitness, rollupConfig: unknown, where = 'L2 node'): BlockFixture {
  return parseBlockFixture(fixtureJsonFromRpc(witness, rollupConfig), where);
}
