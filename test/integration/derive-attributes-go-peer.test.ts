import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { bytesToHex, concat, hexToBigInt, numberToHex, pad, slice, type Hex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDerivePeer } from '../helpers/derive-peer.ts';
import { attributesFor, l1BlobBaseFee, type DerivedPayloadAttributes } from '../../src/derive/attributes.ts';
import { encodeDeposit } from '../../src/op/deposit-tx.ts';
import { l1BlockInfoOf, l1InfoDeposit, l1InfoFormAt } from '../../src/derive/l1-info-deposit.ts';
import { applyConfigUpdateLog, applySystemConfigUpdates, configUpdateTopic, type SystemConfig } from '../../src/derive/system-config.ts';
import { decodeDepositLog, transactionDepositedTopic, userDeposits, type L1Log, type L1Receipt } from '../../src/derive/user-deposits.ts';
import { parseRollupConfig, rulesAt } from '../../src/op/rollup-config.ts';
import { FlashlogError } from '../../src/errors.ts';
import {
  configLog,
  configPayload,
  depositLog,
  ecotoneScalar,
  opaqueData,
  portal,
  systemConfigAddress,
  type DepositFields,
} from '../helpers/l1-logs.ts';

/**
 * Deposits, SystemConfig updates, the L1-info deposit and payload attributes against op-node's own
 * code (op-node/rollup/derive from the Go module proxy, `derive-peer attributes`): for random L1
 * blocks whose receipts hold well-formed and malformed TransactionDeposited and ConfigUpdate logs,
 * flashlog's results equal op-node's byte for byte, and what op-node refuses flashlog refuses.
 */
let peer = '';
beforeAll(() => {
  peer = buildDerivePeer();
}, 20 * 60_000);

/** Ecotone and Fjord at t0, Holocene at t0+100, Isthmus at t0+200, Jovian at t0+300; L1 runs Sepolia's Prague schedule then. */
const t0 = 1_750_000_000;
const rollupJson = {
  l2_chain_id: 901,
  block_time: 2,
  regolith_time: 0,
  canyon_time: 0,
  delta_time: 0,
  ecotone_time: t0,
  fjord_time: t0,
  granite_time: t0,
  holocene_time: t0 + 100,
  isthmus_time: t0 + 200,
  jovian_time: t0 + 300,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
  deposit_contract_address: portal,
  l1_system_config_address: systemConfigAddress,
  batch_inbox_address: '0xff00000000000000000000000000000000000901',
};
const rollup = parseRollupConfig(rollupJson);
const rules = { rollup, depositContract: portal, systemConfig: systemConfigAddress };
const pragueBlobUpdateFraction = 5_007_716n;

interface PeerConfig {
  batcher: Hex;
  overhead: Hex;
  scalar: Hex;
  gasLimit: Hex;
  eip1559Params: Hex;
  operatorFeeParams: Hex;
  minBaseFee: Hex;
  daFootprintGasScalar: number;
}
interface PeerAnswer {
  name: string;
  hash: Hex;
  blobBaseFee: Hex | null;
  deposits: Hex[];
  depositsError?: string;
  userDeposits: Hex[];
  configSteps: { logIndex: number; config: PeerConfig; error?: string }[];
  systemConfig: PeerConfig;
  l1InfoDeposit?: Hex;
  l1InfoError?: string;
  attributes?: Record<string, unknown>;
  attributesError?: string;
}

const toPeer = (config: SystemConfig): PeerConfig => ({
  batcher: config.batcher.toLowerCase() as Hex,
  overhead: config.overhead,
  scalar: config.scalar,
  gasLimit: numberToHex(config.gasLimit),
  eip1559Params: config.eip1559Params,
  operatorFeeParams: config.operatorFeeParams,
  minBaseFee: numberToHex(config.minBaseFee),
  daFootprintGasScalar: config.daFootprintGasScalar,
});
const fromPeer = (config: PeerConfig): SystemConfig => ({
  ...config,
  gasLimit: hexToBigInt(config.gasLimit),
  minBaseFee: hexToBigInt(config.minBaseFee),
});

/** flashlog's attributes in op-node's `eth.DerivedPayloadAttributes` JSON. */
const attributesJson = (attributes: DerivedPayloadAttributes) => ({
  timestamp: numberToHex(attributes.timestamp),
  prevRandao: attributes.prevRandao,
  suggestedFeeRecipient: attributes.suggestedFeeRecipient,
  ...(attributes.withdrawals ? { withdrawals: [] } : {}),
  ...(attributes.parentBeaconBlockRoot ? { parentBeaconBlockRoot: attributes.parentBeaconBlockRoot } : {}),
  transactions: attributes.transactions,
  noTxPool: attributes.noTxPool,
  gasLimit: numberToHex(attributes.gasLimit),
  ...(attributes.eip1559Params ? { eip1559Params: attributes.eip1559Params } : {}),
  ...(attributes.minBaseFee === undefined ? {} : { minBaseFee: Number(attributes.minBaseFee) }),
});

const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bytesToHex(bytes));
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => bytesToHex(bytes));
const depositFields: fc.Arbitrary<DepositFields> = fc.record({
  from: address,
  to: address,
  mint: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 256n - 1n })),
  value: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 256n - 1n })),
  gas: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  isCreation: fc.boolean(),
  data: fc.uint8Array({ maxLength: 80 }).map((bytes) => bytesToHex(bytes)),
});
const word = (value: bigint) => pad(numberToHex(value), { size: 32 });

/** A log without its index: a deposit or a config update, well-formed or not, or a log derivation skips. */
const logArb: fc.Arbitrary<Omit<L1Log, 'logIndex'>> = fc.oneof(
  { weight: 6, arbitrary: depositFields.map((d) => depositLog(d, 0)) },
  // isCreation is any non-zero byte.
  {
    weight: 1,
    arbitrary: depositFields.map((d) => {
      const opaque = opaqueData(d);
      return depositLog(d, 0, 0n, concat([slice(opaque, 0, 72), '0x02', `0x${opaque.slice(2 + 2 * 73)}`]));
    }),
  },
  // Malformed deposits: each one fails its whole block in op-node.
  { weight: 1, arbitrary: depositFields.map((d) => depositLog(d, 0, 1n)) },
  { weight: 1, arbitrary: depositFields.map((d) => depositLog(d, 0, 0n, opaqueData(d).slice(0, 2 + 2 * 72) as Hex)) },
  { weight: 1, arbitrary: depositFields.map((d) => ({ ...depositLog(d, 0), data: concat([depositLog(d, 0).data, word(0n)]) })) },
  { weight: 1, arbitrary: depositFields.map((d) => ({ ...depositLog(d, 0), topics: depositLog(d, 0).topics.slice(0, 3) })) },
  {
    weight: 1,
    arbitrary: depositFields.map((d) => ({ ...depositLog(d, 0), data: concat([word(64n), depositLog(d, 0).data.slice(66) as Hex]) })),
  },
  // Not deposits: another contract's TransactionDeposited, the portal's other events.
  { weight: 1, arbitrary: depositFields.map((d) => ({ ...depositLog(d, 0), address: systemConfigAddress })) },
  {
    weight: 1,
    arbitrary: fc.record({ address: fc.constant(portal), topics: fc.array(hash, { maxLength: 4 }), data: fc.constant('0x' as Hex) }),
  },
  // Config updates of every type, with valid payloads.
  { weight: 2, arbitrary: address.map((a) => configLog(0, configPayload.batcher(a), 0)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(hash, fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.constantFrom(0, 1, 2))
      .map(([overhead, base, blob, version]) =>
        configLog(1, configPayload.feeScalars(overhead, ecotoneScalar(base, version === 0 ? 0 : blob, version)), 0),
      ),
  },
  { weight: 1, arbitrary: fc.tuple(hash, hash).map(([overhead, scalar]) => configLog(1, configPayload.feeScalars(overhead, scalar), 0)) },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((gas) => configLog(2, configPayload.gasLimit(gas), 0)) },
  { weight: 1, arbitrary: address.map((a) => configLog(3, configPayload.unsafeBlockSigner(a), 0)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(0, 1, 250, 2 ** 32 - 1), fc.constantFrom(0, 1, 6, 2 ** 32 - 1))
      .map(([d, e]) => configLog(4, configPayload.eip1559(d, e), 0)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))
      .map(([s, c]) => configLog(5, configPayload.operatorFee(s, c), 0)),
  },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((fee) => configLog(6, configPayload.minBaseFee(fee), 0)) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 65535 }).map((s) => configLog(7, configPayload.daFootprintGasScalar(s), 0)) },
  // Malformed config updates: op-node skips them and keeps the config.
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 9 }).map((type) => configLog(type, word(2n ** 70n), 0)) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 9 }).map((type) => configLog(type, concat([word(1n), word(1n)]), 0)) },
  { weight: 1, arbitrary: address.map((a) => configLog(0, configPayload.batcher(a), 0, 1n)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 100 }).map((bytes) => ({ ...configLog(2, word(1n), 0), data: bytesToHex(bytes) })) },
  {
    weight: 1,
    arbitrary: address.map((a) => ({ ...configLog(0, configPayload.batcher(a), 0), topics: configLog(0, '0x', 0).topics.slice(0, 2) })),
  },
);

const receiptsArb: fc.Arbitrary<L1Receipt[]> = fc
  .array(fc.record({ status: fc.constantFrom('success', 'success', 'success', 'reverted'), logs: fc.array(logArb, { maxLength: 4 }) }), {
    maxLength: 4,
  })
  .map((receipts) => {
    let logIndex = 0;
    return receipts.map((receipt) => ({
      status: receipt.status as L1Receipt['status'],
      logs: receipt.logs.map((log) => ({ ...log, logIndex: logIndex++ })),
    }));
  });

const configArb: fc.Arbitrary<SystemConfig> = fc.record({
  batcher: address,
  overhead: hash,
  scalar: fc.oneof(
    fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })).map(([b, s]) => ecotoneScalar(b, s)),
    fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((b) => ecotoneScalar(b, 0, 0)),
    fc.constant(concat(['0x00', pad('0x01', { size: 27 }), '0x00000001'])),
  ),
  gasLimit: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  eip1559Params: fc.constantFrom('0x0000000000000000', '0x000000fa00000006') as fc.Arbitrary<Hex>,
  operatorFeeParams: fc
    .tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }))
    .map(([s, c]) => word((BigInt(s) << 64n) | c)),
  minBaseFee: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  daFootprintGasScalar: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 65535 })),
});

/** L1 times either side of Ecotone; L2 times in every L1-info form, fork activation blocks included. */
const caseArb = fc.record({
  header: fc.record({
    parentHash: hash,
    number: fc.integer({ min: 1, max: 2 ** 40 }),
    timestamp: fc.constantFrom(t0 - 60, t0 - 2, t0, t0 + 90),
    baseFeePerGas: fc.bigInt({ min: 0n, max: 2n ** 128n }),
    mixHash: hash,
    excessBlobGas: fc.option(fc.bigInt({ min: 0n, max: 200_000_000n }), { nil: null }),
    parentBeaconBlockRoot: fc.option(hash, { nil: null }),
  }),
  l2Offset: fc.constantFrom(0, 2, 40),
  l2At: fc.constantFrom(t0 - 40, t0, t0 + 2, t0 + 150, t0 + 200, t0 + 202, t0 + 300, t0 + 302, t0 + 500),
  sequenceNumber: fc.constantFrom(0, 0, 1, 3),
  systemConfig: configArb,
  receipts: receiptsArb,
  batchTransactions: fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 3 }),
});
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function peerAttributes(cases: Case[]): PeerAnswer[] {
  const input = {
    rollup: rollupJson,
    cases: cases.map((c, i) => ({
      name: `case ${i}`,
      header: {
        ...c.header,
        number: numberToHex(c.header.number),
        timestamp: numberToHex(c.header.timestamp),
        baseFeePerGas: numberToHex(c.header.baseFeePerGas),
        excessBlobGas: c.header.excessBlobGas === null ? null : numberToHex(c.header.excessBlobGas),
      },
      receipts: c.receipts.map((r) => ({ status: r.status === 'success' ? 1 : 0, logs: r.logs })),
      systemConfig: toPeer(c.systemConfig),
      sequenceNumber: c.sequenceNumber,
      l2Time: l2TimeOf(c),
      batchTransactions: c.batchTransactions.map((tx) => bytesToHex(tx)),
    })),
  };
  const run = spawnSync(peer, ['attributes'], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`derive-peer attributes exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as PeerAnswer[];
}
const l2TimeOf = (c: Case) => Math.max(c.l2At, c.header.timestamp + c.l2Offset);
const lower = (value: unknown): unknown => JSON.parse(JSON.stringify(value).toLowerCase());

function attempt<T>(run: () => T): { value: T } | { error: FlashlogError } {
  try {
    return { value: run() };
  } catch (error) {
    if (error instanceof FlashlogError) return { error };
    throw error;
  }
}

describe('deposits, SystemConfig updates, L1-info deposits and payload attributes against op-node (derive-peer attributes)', () => {
  const cases = fc.sample(caseArb, { numRuns: 300, seed: 29 });
  let answers: PeerAnswer[] = [];
  beforeAll(() => {
    answers = peerAttributes(cases);
  }, 120_000);

  it('covers what it claims: bad deposits, skipped updates, every L1-info form, attributes op-node builds', () => {
    const forms = new Set(cases.map((c) => l1InfoFormAt(rulesAt(rollup, BigInt(l2TimeOf(c))))));
    expect([...forms].sort()).toEqual(['bedrock', 'ecotone', 'isthmus', 'jovian']);
    expect(answers.filter((a) => a.depositsError).length).toBeGreaterThan(10);
    expect(answers.filter((a) => a.configSteps.some((s) => s.error)).length).toBeGreaterThan(10);
    expect(answers.filter((a) => a.attributes && a.deposits.length > 0).length).toBeGreaterThan(10);
    expect(answers.filter((a) => a.attributes).length).toBeGreaterThan(100);
  });

  it('decodes each TransactionDeposited log as op-node does, and refuses the block op-node refuses', () => {
    cases.forEach((c, i) => {
      const answer = answers[i]!;
      const place = { l1BlockHash: answer.hash, l1BlockNumber: BigInt(c.header.number) };
      const accepted = c.receipts
        .filter((r) => r.status === 'success')
        .flatMap((r) => r.logs.filter((l) => l.address === portal && l.topics[0] === transactionDepositedTopic))
        .map((log) => attempt(() => encodeDeposit(decodeDepositLog(log, place))))
        .flatMap((result) => ('value' in result ? [result.value] : []));
      expect(accepted, answer.name).toEqual(answer.userDeposits);
      const all = attempt(() => userDeposits(c.receipts, portal, place).map(encodeDeposit));
      if (answer.depositsError)
        expect('error' in all && all.error.code, `${answer.name}: ${answer.depositsError}`).toBe('DERIVE_DEPOSIT_INVALID');
      else expect(all, answer.name).toEqual({ value: answer.deposits });
    });
  });

  it("applies each ConfigUpdate log as op-node's ProcessSystemConfigUpdateLogEvent does, skipping what it skips", () => {
    cases.forEach((c, i) => {
      const answer = answers[i]!;
      const ecotone = rulesAt(rollup, BigInt(c.header.timestamp)).active('ecotone');
      let config = c.systemConfig;
      const steps = c.receipts
        .filter((r) => r.status === 'success')
        .flatMap((r) => r.logs.filter((l) => l.address === systemConfigAddress && l.topics[0] === configUpdateTopic))
        .map((log) => {
          const next = applyConfigUpdateLog(config, log, { systemConfig: systemConfigAddress, ecotone });
          if (typeof next !== 'string') config = next;
          return { logIndex: log.logIndex, config: toPeer(config), skipped: typeof next === 'string' };
        });
      expect(lower(steps), answer.name).toEqual(
        lower(answer.configSteps.map((s) => ({ logIndex: s.logIndex, config: s.config, skipped: !!s.error }))),
      );
      if (c.sequenceNumber === 0) {
        const { config: after } = applySystemConfigUpdates(c.systemConfig, c.receipts, { systemConfig: systemConfigAddress, ecotone });
        expect(lower(toPeer(after)), answer.name).toEqual(lower(answer.systemConfig));
      }
    });
  });

  it("builds the L1-info deposit op-node's L1InfoDeposit builds, in every form", () => {
    cases.forEach((c, i) => {
      const answer = answers[i]!;
      const blobBaseFee = c.header.excessBlobGas === null ? null : l1BlobBaseFee(c.header.excessBlobGas, pragueBlobUpdateFraction);
      expect(blobBaseFee === null ? null : numberToHex(blobBaseFee), answer.name).toEqual(answer.blobBaseFee);
      const l2 = rulesAt(rollup, BigInt(l2TimeOf(c)));
      const origin = {
        ...c.header,
        hash: answer.hash,
        number: BigInt(c.header.number),
        timestamp: BigInt(c.header.timestamp),
        blobBaseFee,
      };
      const built = attempt(() =>
        encodeDeposit(l1InfoDeposit(l1BlockInfoOf(origin, BigInt(c.sequenceNumber), fromPeer(answer.systemConfig), l1InfoFormAt(l2)), l2)),
      );
      if (answer.l1InfoError) expect('error' in built, `${answer.name}: ${answer.l1InfoError}`).toBe(true);
      else expect(built, answer.name).toEqual({ value: answer.l1InfoDeposit });
    });
  });

  it("builds the payload attributes op-node's PreparePayloadAttributes builds, batch transactions appended", () => {
    let built = 0;
    cases.forEach((c, i) => {
      const answer = answers[i]!;
      const l2Time = BigInt(l2TimeOf(c));
      const blobBaseFee = c.header.excessBlobGas === null ? null : l1BlobBaseFee(c.header.excessBlobGas, pragueBlobUpdateFraction);
      const header = {
        ...c.header,
        hash: answer.hash,
        number: BigInt(c.header.number),
        timestamp: BigInt(c.header.timestamp),
        blobBaseFee,
      };
      const result = attempt(() =>
        attributesFor(
          { timestamp: l2Time, transactions: c.batchTransactions },
          { header, receipts: c.receipts },
          BigInt(c.sequenceNumber),
          c.systemConfig,
          rules,
        ),
      );
      const upgrade = ['ecotone', 'fjord', 'isthmus', 'jovian'].some((fork) => rulesAt(rollup, l2Time).activationBlock(fork as 'ecotone'));
      if (answer.attributesError) {
        expect('error' in result, `${answer.name}: ${answer.attributesError}`).toBe(true);
      } else if (upgrade) {
        // op-node adds the fork's upgrade deposits; flashlog does not build them and says so.
        expect('error' in result && result.error.message, answer.name).toMatch(/upgrade deposits are not built/);
      } else {
        expect('value' in result, `${answer.name}: ${'error' in result ? result.error.message : ''}`).toBe(true);
        if ('value' in result) expect(lower(attributesJson(result.value.attributes)), answer.name).toEqual(lower(answer.attributes));
        built++;
      }
    });
    expect(built).toBeGreaterThan(100);
  });
});
